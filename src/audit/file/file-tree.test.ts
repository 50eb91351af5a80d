import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { naiveRoot, referenceLeafInput } from '../merkle/test-naive-tree.js';
import { leafHash } from '../merkle/tree-hash.js';
import { verifyConsistency } from '../merkle/verify-consistency.js';
import { verifyInclusion } from '../merkle/verify-inclusion.js';
import { AUDIT_LOG_FILE, type FileAuditLog } from './file-audit-log.js';
import {
  event,
  newProbe,
  openLog,
  probedFile,
  readLogLines,
  recordingReads,
  tempDir,
} from './test-fixtures.js';
import { StoredAuditTree } from '../audit-tree.js';
import { openLogFile } from './log-file.js';
import { TREE_FILE, TreeFile } from './tree-file.js';
import { storedPosition } from '../merkle/tree-layout.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

async function appendMany(log: FileAuditLog, count: number): Promise<AuditEntry[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => log.append(event({ decision_id: `dec-${i}`, data: { i } }))),
  );
}

async function storedEntries(): Promise<AuditEntry[]> {
  return (await readLogLines(dir))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
}

describe('the file audit log keeps an RFC 6962 tree beside the log', () => {
  it('has, at every size, the root of a naive tree over the canonical entries without their hash', async () => {
    const log = await openLog(dir, { maxBatchEntries: 7 });
    const entries = await appendMany(log, 45);
    const tree = log.tree();
    expect(await tree.size()).toBe(45);
    const leaves = entries.map(referenceLeafInput);
    for (const size of [0, 1, 2, 7, 8, 31, 32, 33, 45]) {
      expect((await tree.root(size)).toString('hex'), `size ${size}`).toBe(
        naiveRoot(leaves.slice(0, size)).toString('hex'),
      );
    }
    await log.close();
  });

  it('proves every entry in the current tree and in an older one, and the older tree in the newer', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 40);
    const tree = log.tree();
    for (const size of [17, 40]) {
      const root = await tree.root(size);
      for (const entry of entries.slice(0, size)) {
        const proof = await tree.inclusionProof(entry.seq - 1, size);
        expect(() =>
          verifyInclusion(entry.seq - 1, size, leafHash(referenceLeafInput(entry)), proof, root),
        ).not.toThrow();
      }
    }
    const proof = await tree.consistencyProof(17, 40);
    const [older, newer] = [await tree.root(17), await tree.root(40)];
    expect(() => verifyConsistency(17, 40, proof, older, newer)).not.toThrow();
    await log.close();
  });

  it('refuses sizes it does not hold', async () => {
    const log = await openLog(dir);
    await appendMany(log, 3);
    const tree = log.tree();
    await expect(tree.root(4)).rejects.toMatchObject({ code: 'tree_size_unavailable' });
    await expect(tree.inclusionProof(3, 3)).rejects.toThrow(RangeError);
    await expect(tree.consistencyProof(2, 9)).rejects.toMatchObject({ code: 'tree_size_unavailable' });
    await log.close();
  });

  it('carries on after a restart from the stored tree, not a rebuild: an altered early node stays altered', async () => {
    const first = await openLog(dir, { checkpointEvery: { entries: 10, seconds: 3600 } });
    await appendMany(first, 30);
    await first.close();
    // Alter leaf 2's node: a rebuild from the log would silently repair it.
    const treePath = join(dir, TREE_FILE);
    const bytes = await readFile(treePath);
    bytes[3 * 32]! ^= 0xff; // leaf 2 is stored at record 2*2 - popcount(2) = 3
    await writeFile(treePath, bytes);
    const second = await openLog(dir, { checkpointEvery: { entries: 10, seconds: 3600 } });
    await appendMany(second, 5);
    const tree = second.tree();
    expect(await tree.size()).toBe(35);
    const entries = await storedEntries();
    const root = await tree.root(35);
    // The root is folded from nodes above the leaf, stored when it was appended: still right.
    expect(naiveRoot(entries.map(referenceLeafInput)).equals(root)).toBe(true);
    // The altered node is leaf 3's sibling: its proof now fails, as a rebuild would have hidden.
    const proof = await tree.inclusionProof(3, 35);
    expect(() => verifyInclusion(3, 35, leafHash(referenceLeafInput(entries[3]!)), proof, root)).toThrow();
    const untouched = await tree.inclusionProof(9, 35);
    expect(() =>
      verifyInclusion(9, 35, leafHash(referenceLeafInput(entries[9]!)), untouched, root),
    ).not.toThrow();
    await second.close();
  });

  it('catches up after a crash that left the tree behind the log, or with no tree at all', async () => {
    const first = await openLog(dir);
    await appendMany(first, 20);
    await first.close();
    await truncate(join(dir, TREE_FILE), 5 * 32 + 7); // a torn record, and most leaves gone
    const second = await openLog(dir);
    expect(await second.tree().size()).toBe(20);
    const leaves = (await storedEntries()).map(referenceLeafInput);
    expect((await second.tree().root(20)).equals(naiveRoot(leaves))).toBe(true);
    await second.close();

    await writeFile(join(dir, TREE_FILE), '');
    const third = await openLog(dir);
    expect((await third.tree().root(20)).equals(naiveRoot(leaves))).toBe(true);
    await third.close();
  });

  it('cuts the tree back when the log lost entries the tree still has', async () => {
    const first = await openLog(dir);
    await appendMany(first, 12);
    await first.close();
    const lines = await readLogLines(dir);
    await writeFile(join(dir, AUDIT_LOG_FILE), `${lines.slice(0, 9).join('\n')}\n`);
    const second = await openLog(dir);
    expect(await second.tree().size()).toBe(9);
    const [next] = await appendMany(second, 1);
    expect(next!.seq).toBe(10);
    const leaves = (await storedEntries()).map(referenceLeafInput);
    expect((await second.tree().root(10)).equals(naiveRoot(leaves))).toBe(true);
    await second.close();
  });

  it('stores neither entry nor tree nodes of a batch whose tree write failed, and goes on intact', async () => {
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe, TREE_FILE) });
    await appendMany(log, 4);
    probe.failNextWrite = true;
    await expect(log.append(event())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect((await log.head()).seq).toBe(4);
    expect(await log.tree().size()).toBe(4);
    await appendMany(log, 3);
    const leaves = (await storedEntries()).map(referenceLeafInput);
    expect(leaves).toHaveLength(7);
    expect((await log.tree().root(7)).equals(naiveRoot(leaves))).toBe(true);
    await log.close();
  });

  it('syncs the tree file before each checkpoint, not after each batch; a failed sync leaves that checkpoint out', async () => {
    const probe = newProbe();
    const warnings: string[] = [];
    const log = await openLog(dir, {
      openFile: probedFile(probe, TREE_FILE),
      checkpointEvery: { entries: 10, seconds: 3600 },
      logger: {
        info: () => undefined,
        warn: (_d, message) => warnings.push(message),
        error: () => undefined,
      },
    });
    const atOpen = probe.syncs;
    for (let i = 0; i < 25; i++) await log.append(event({ decision_id: `dec-${i}` }));
    await expect.poll(async () => (await log.checkpoints()).map((c) => c.seq)).toEqual([10, 20]);
    expect(probe.syncs - atOpen).toBe(2);
    probe.failNextSync = true;
    for (let i = 25; i < 30; i++) await log.append(event({ decision_id: `dec-${i}` }));
    await expect.poll(() => warnings).toContain('audit checkpoint could not be saved');
    expect((await log.checkpoints()).map((c) => c.seq)).toEqual([10, 20]);
    for (let i = 30; i < 40; i++) await log.append(event({ decision_id: `dec-${i}` }));
    await expect.poll(async () => (await log.checkpoints()).map((c) => c.seq)).toEqual([10, 20, 40]);
    await log.close();
  });

  it('hashes again from the log what the tree held past the last checkpoint (it may never have reached the disk)', async () => {
    const log = await openLog(dir, { checkpointEvery: { entries: 100_000, seconds: 3600 } });
    await appendMany(log, 1200);
    await log.close();
    // A power loss before any checkpoint: no checkpoint, and the tree's records came back as zeros.
    await rm(join(dir, 'checkpoints.json'));
    const size = (await readFile(join(dir, TREE_FILE))).length;
    await writeFile(join(dir, TREE_FILE), Buffer.alloc(size));
    const reopened = await openLog(dir, { checkpointEvery: { entries: 100_000, seconds: 3600 } });
    const leaves = (await storedEntries()).map(referenceLeafInput);
    expect(leaves).toHaveLength(1200);
    expect((await reopened.tree().root(1200)).equals(naiveRoot(leaves))).toBe(true);
    await reopened.close();
  });

  it('an entry altered in the file no longer matches its proof', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 10);
    const tree = log.tree();
    const root = await tree.root(10);
    const proof = await tree.inclusionProof(4, 10);
    await log.close();
    const altered = { ...entries[4]!, outcome: 'DENY' as const };
    expect(() =>
      verifyInclusion(4, 10, leafHash(referenceLeafInput(entries[4]!)), proof, root),
    ).not.toThrow();
    expect(() => verifyInclusion(4, 10, leafHash(referenceLeafInput(altered)), proof, root)).toThrow();
  });
});

describe('TreeFile keeps upper nodes in memory once read', () => {
  it('serves proofs of the tree as it is after a truncation and a different append, never the dropped nodes', async () => {
    const file = await openLogFile(join(dir, TREE_FILE));
    const tree = await TreeFile.open(file);
    const first = Array.from({ length: 5000 }, (_, i) => Buffer.from(`first ${i}`));
    await tree.append(first.map((input) => leafHash(input)));
    const stored = new StoredAuditTree(tree);
    // Reads (and keeps) the level-11 and level-12 nodes over leaves 2048..4095 and 0..4095.
    await stored.inclusionProof(4500, 5000);
    await stored.inclusionProof(10, 5000);
    await tree.truncateTo(2500);
    const second = Array.from({ length: 2500 }, (_, i) => Buffer.from(`second ${i}`));
    await tree.append(second.map((input) => leafHash(input)));
    const leaves = [...first.slice(0, 2500), ...second];
    const root = naiveRoot(leaves);
    expect((await stored.root(5000)).equals(root)).toBe(true);
    for (const index of [10, 2047, 2048, 3000, 4095, 4500, 4999]) {
      const proof = await stored.inclusionProof(index, 5000);
      expect(
        () => verifyInclusion(index, 5000, leafHash(leaves[index]!), proof, root),
        `leaf ${index}`,
      ).not.toThrow();
    }
    await tree.close();
  });
});

describe('TreeFile reads stored nodes', () => {
  const leaf = (index: number): { level: number; index: number } => ({ level: 0, index });

  it('reads nodes close together in one read of just their span, and far ones apart', async () => {
    const { file, reads } = recordingReads(await openLogFile(join(dir, TREE_FILE)));
    const tree = await TreeFile.open(file);
    const inputs = Array.from({ length: 5000 }, (_, i) => Buffer.from(`leaf ${i}`));
    await tree.append(inputs.map((input) => leafHash(input)));
    reads.length = 0;
    const found = await tree.readNodes([leaf(4002), leaf(10), leaf(4000)]);
    expect([...found.keys()].sort()).toEqual(['0:10', '0:4000', '0:4002']);
    for (const index of [10, 4000, 4002])
      expect(found.get(`0:${index}`)!.equals(leafHash(inputs[index]!))).toBe(true);
    const [near, far] = [storedPosition(leaf(4000)), storedPosition(leaf(4002))];
    expect(reads).toEqual([
      { position: storedPosition(leaf(10)) * 32, length: 32 },
      { position: near * 32, length: (far - near + 1) * 32 },
    ]);
    await tree.close();
  });

  it('reads at most 64 KiB at once: nodes 2,047 records apart in one read, 2,048 apart in two', async () => {
    const { file, reads } = recordingReads(await openLogFile(join(dir, TREE_FILE)));
    const tree = await TreeFile.open(file);
    await tree.append(Array.from({ length: 5000 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`))));
    const from = storedPosition(leaf(10));
    const apart = (records: number) => {
      const index = Array.from({ length: 5000 }, (_, i) => i).find(
        (i) => storedPosition(leaf(i)) - from === records,
      );
      return leaf(index!);
    };
    for (const [records, expected] of [
      [2047, [{ position: from * 32, length: 2048 * 32 }]],
      [
        2048,
        [
          { position: from * 32, length: 32 },
          { position: (from + 2048) * 32, length: 32 },
        ],
      ],
    ] as const) {
      reads.length = 0;
      await tree.readNodes([leaf(10), apart(records)]);
      expect(reads, `${records} records apart`).toEqual(expected);
    }
    await tree.close();
  });

  it('never reads the records a failed append left past the tree as part of it', async () => {
    const probe = newProbe();
    const tree = await TreeFile.open(await probedFile(probe, TREE_FILE)(join(dir, TREE_FILE)));
    await tree.append([leafHash(Buffer.from('a')), leafHash(Buffer.from('b'))]);
    // Half of the next append's four records reach the file: leaves 2 and 3, not their parents.
    probe.failNextWrite = true;
    await expect(tree.append([leafHash(Buffer.from('c')), leafHash(Buffer.from('d'))])).rejects.toThrow(
      'ENOSPC',
    );
    expect(tree.size).toBe(2);
    expect(await tree.readNodes([leaf(1), leaf(2)])).toEqual(new Map([['0:1', leafHash(Buffer.from('b'))]]));
    await tree.append([leafHash(Buffer.from('e'))]);
    expect(await tree.readNodes([leaf(2)])).toEqual(new Map([['0:2', leafHash(Buffer.from('e'))]]));
    await tree.close();
  });
});
