import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { naiveRoot, referenceLeafInput } from '../merkle/test-naive-tree.js';
import { CHECKPOINTS_FILE, FileCheckpointStore } from './checkpoint-store.js';
import { AUDIT_LOG_FILE, type FileAuditLog } from './file-audit-log.js';
import {
  anchorAt,
  event,
  newProbe,
  openLog,
  probedFile,
  readLogLines,
  recordingLogger,
  tempDir,
} from './test-fixtures.js';
import { TREE_FILE } from './tree-file.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** Appends n entries and closes the log (which checkpoints its head). */
async function seed(n: number): Promise<AuditEntry[]> {
  const log = await openLog(dir);
  const entries = await Promise.all(
    Array.from({ length: n }, (_, i) => log.append(event({ decision_id: `dec-${i}`, data: { i } }))),
  );
  await log.close();
  return entries;
}

/** Leaves one checkpoint, at this entry (none when null): the state of a crash after it. */
async function checkpointOnlyAt(entry: AuditEntry | null): Promise<void> {
  await rm(join(dir, CHECKPOINTS_FILE));
  if (!entry) return;
  const store = new FileCheckpointStore({ dir, retain: 10 });
  await store.save({
    seq: entry.seq,
    hash: entry.hash,
    entry_id: entry.id,
    time: '2025-01-02T00:00:00.000Z',
  });
}

async function keepLines(keep: (line: string, i: number) => boolean): Promise<void> {
  const lines = (await readLogLines(dir)).slice(0, -1);
  await writeFile(
    join(dir, AUDIT_LOG_FILE),
    lines
      .filter(keep)
      .map((line) => `${line}\n`)
      .join(''),
  );
}

async function storedLeaves(): Promise<Buffer[]> {
  return (await readLogLines(dir))
    .filter((line) => line !== '')
    .map((line) => referenceLeafInput(JSON.parse(line) as object));
}

async function expectTreeOf(log: FileAuditLog, leaves: Buffer[]): Promise<void> {
  expect(await log.tree().size()).toBe(leaves.length);
  expect((await log.tree().root(leaves.length)).equals(naiveRoot(leaves))).toBe(true);
}

describe('the tree catches up with the log at open', () => {
  it('after a clean close it hashes nothing again, writes nothing to the tree and logs nothing', async () => {
    await seed(10);
    const probe = newProbe();
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { openFile: probedFile(probe, TREE_FILE), logger });
    expect(probe.writes).toBe(0);
    expect(logged).toEqual([]);
    await expectTreeOf(log, await storedLeaves());
    await log.close();
  });

  it('hashes again, chunk by chunk, what follows the last checkpoint, ending level with the log without a word', async () => {
    const entries = await seed(1203);
    await checkpointOnlyAt(entries[1]!);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toEqual([]);
    await expectTreeOf(log, await storedLeaves());
    await log.close();
  });

  it('cuts back a tree that is ahead of the log, with a warning giving both sizes', async () => {
    await seed(12);
    await keepLines((_, i) => i < 9);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toContainEqual({
      level: 'warn',
      details: { tree: 12, log: 9 },
      message: 'audit tree is ahead of the log (a write lost in a crash); cutting it back',
    });
    await expectTreeOf(log, await storedLeaves());
    await log.close();
  });

  it.each([
    { where: 'inside the hashed span', checkpointed: 0, missing: 5 },
    { where: 'first after the last checkpoint', checkpointed: 8, missing: 9 },
  ])('stops the tree before a seq the log lacks, naming it in an error: $where', async (c) => {
    const entries = await seed(10);
    await checkpointOnlyAt(c.checkpointed === 0 ? null : entries[c.checkpointed - 1]!);
    await keepLines((_, i) => i !== c.missing - 1);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toContainEqual({
      level: 'error',
      details: { seq: c.missing },
      message: 'audit log has no entry at this seq; the Merkle tree stops before it',
    });
    await expectTreeOf(log, (await storedLeaves()).slice(0, c.missing - 1));
    await log.close();
  });

  it('a tree stopped at a gap takes no more leaves, and no retention anchor past it', async () => {
    const entries = await seed(10);
    await checkpointOnlyAt(null);
    await keepLines((_, i) => i !== 4);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toContainEqual({
      level: 'error',
      details: { break: expect.objectContaining({ seq: 5 }) },
      message: 'audit chain is broken; new entries continue from the last one',
    });
    const treeAtOpen = (await storedLeaves()).slice(0, 4);
    await expectTreeOf(log, treeAtOpen);
    // Leaf index = seq - 1: a leaf appended now would sit at the missing seq's index.
    await log.append(event());
    await expectTreeOf(log, treeAtOpen);
    await expect(log.trim(anchorAt(entries[7]!))).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'the Merkle tree has not caught up to seq 8 yet; try again',
    });
    await log.trim(anchorAt(entries[2]!));
    expect(await log.retained()).toMatchObject({ from_seq: 4 });
    await log.close();
  });
});
