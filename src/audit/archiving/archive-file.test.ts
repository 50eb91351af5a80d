import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditQuery, Checkpoint } from '../audit-log.js';
import { storedText } from '../chain.js';
import type { FileAuditLog } from '../file/file-audit-log.js';
import { event, openLog, tempDir } from '../file/test-fixtures.js';
import { digestFile, renameDurably, verifyArchive, writeArchive } from './archive-file.js';
import { answeringUpTo, linesOf, withOverrides } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

/** A real file log holding `count` entries, appended together (one group commit per window). */
async function logWith(count: number): Promise<{ log: FileAuditLog; entries: AuditEntry[] }> {
  const log = await openLog(join(dir, 'log'));
  const entries = await Promise.all(
    Array.from({ length: count }, (_, i) => log.append(event({ decision_id: `dec-${i}` }))),
  );
  return { log, entries: entries.sort((a, b) => a.seq - b.seq) };
}

function checkpointOf(entry: AuditEntry): Checkpoint {
  return { seq: entry.seq, hash: entry.hash, entry_id: entry.id, time: entry.timestamp };
}

const openFiles = (): number => readdirSync('/proc/self/fd').length;

describe('writeArchive', () => {
  it('writes the stored lines of the range, reading it in pages of at most 1,000 entries and nothing past it', async () => {
    const { log, entries } = await logWith(1_100);
    const asked: AuditQuery[] = [];
    const counted = withOverrides(log, {
      query: (q) => {
        asked.push(q);
        return log.query(q);
      },
    });
    const path = join(dir, 'archive.jsonl');
    await writeArchive(counted, path, 3, 1_050);

    expect(await linesOf(path)).toEqual(entries.slice(2, 1_050).map(storedText));
    expect(asked.map(({ after, limit }) => ({ after, limit }))).toEqual([
      { after: 2, limit: 1_000 },
      { after: 1_002, limit: 48 },
    ]);
    expect(asked.every((q) => q.order === 'asc')).toBe(true);
    await log.close();
  });

  it('never writes an entry past the range, even from a log that answers whole pages', async () => {
    const { log, entries } = await logWith(30);
    const generous = withOverrides(log, { query: (q) => log.query({ ...q, limit: 1_000 }) });
    const path = join(dir, 'archive.jsonl');
    await writeArchive(generous, path, 1, 12);
    expect(await linesOf(path)).toEqual(entries.slice(0, 12).map(storedText));
    await log.close();
  });

  it('stops at a gap, writing what came before it, and leaves no file open', async () => {
    const { log, entries } = await logWith(20);
    const gap = answeringUpTo(log, 7);
    const path = join(dir, 'archive.jsonl');
    const before = openFiles();
    await writeArchive(gap, path, 1, 20);
    expect(openFiles()).toBe(before);
    expect(await linesOf(path)).toEqual(entries.slice(0, 7).map(storedText));
    // Only the owner may read the archive and its group too; nobody else.
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    await log.close();
  });

  it('closes the file when the log fails mid-way', async () => {
    const { log } = await logWith(5);
    const failing = withOverrides(log, { query: () => Promise.reject(new Error('log unavailable')) });
    const before = openFiles();
    await expect(writeArchive(failing, join(dir, 'archive.jsonl'), 1, 5)).rejects.toThrow('log unavailable');
    expect(openFiles()).toBe(before);
    await log.close();
  });
});

describe('verifyArchive', () => {
  async function archiveOf(lines: string[]): Promise<string> {
    const path = join(dir, `archive-${lines.length}.jsonl`);
    await writeFile(path, lines.map((l) => `${l}\n`).join(''));
    return path;
  }

  it('accepts the range from genesis or from the previous anchor up to the checkpoint', async () => {
    const { log, entries } = await logWith(20);
    const stored = entries.map(storedText);
    expect(
      await verifyArchive(await archiveOf(stored.slice(0, 10)), null, checkpointOf(entries[9]!)),
    ).toMatchObject({
      ok: true,
      head: { seq: 10, hash: entries[9]!.hash },
      start: { trusted: 'genesis' },
    });
    const start = { seq: 10, hash: entries[9]!.hash };
    expect(
      await verifyArchive(await archiveOf(stored.slice(10)), start, checkpointOf(entries[19]!)),
    ).toMatchObject({
      ok: true,
      head: { seq: 20 },
      start: { trusted: 'given', seq: 10 },
    });
    await log.close();
  });

  it('refuses an archive that stops short of its checkpoint, naming the first seq missing', async () => {
    const { log, entries } = await logWith(20);
    const report = await verifyArchive(
      await archiveOf(entries.slice(0, 15).map(storedText)),
      null,
      checkpointOf(entries[19]!),
    );
    expect(report).toMatchObject({
      ok: false,
      break: { seq: 16, reason: expect.stringMatching(/truncated/) },
    });
    await log.close();
  });

  it('refuses an archive that runs past its checkpoint, naming the first seq too many', async () => {
    const { log, entries } = await logWith(25);
    const report = await verifyArchive(
      await archiveOf(entries.map(storedText)),
      null,
      checkpointOf(entries[19]!),
    );
    expect(report).toMatchObject({
      ok: false,
      break: { seq: 26, reason: 'the archive ends at seq 25, not at checkpoint 20' },
    });
    await log.close();
  });

  it('refuses an archive that lacks the first entries after the previous anchor', async () => {
    const { log, entries } = await logWith(20);
    // seq 12..20 only: on its own it would verify from its first entry, taken on trust.
    const report = await verifyArchive(
      await archiveOf(entries.slice(11).map(storedText)),
      { seq: 10, hash: entries[9]!.hash },
      checkpointOf(entries[19]!),
    );
    expect(report).toMatchObject({ ok: false, break: { seq: 11 } });
    await log.close();
  });

  it('checks the end against the checkpoint: another history of the same length is refused at it', async () => {
    const { log, entries } = await logWith(10);
    const other = await openLog(join(dir, 'other'));
    const rewritten: AuditEntry[] = [];
    for (let i = 0; i < 10; i += 1) rewritten.push(await other.append(event({ decision_id: `other-${i}` })));
    const report = await verifyArchive(
      await archiveOf(rewritten.map(storedText)),
      null,
      checkpointOf(entries[9]!),
    );
    expect(report.ok).toBe(false);
    // Found by the chain verifier's checkpoint check, not only by the end's position.
    expect(report.break).toMatchObject({
      seq: 10,
      reason: expect.stringMatching(/another hash: the log was rewritten/),
    });
    await other.close();
    await log.close();
  });
});

describe('digestFile and renameDurably', () => {
  it('gives the size and SHA-256 of the whole file, across many read chunks', async () => {
    const path = join(dir, 'big');
    const content = Buffer.alloc(300_000, 'abcdefghij');
    await writeFile(path, content);
    expect(await digestFile(path)).toEqual({
      bytes: 300_000,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
  });

  it('renames into place and closes the folder it synced', async () => {
    await mkdir(join(dir, 'into'));
    await writeFile(join(dir, 'a.partial'), 'content');
    const before = openFiles();
    await renameDurably(join(dir, 'a.partial'), join(dir, 'into', 'a'));
    expect(openFiles()).toBe(before);
    expect(await readFile(join(dir, 'into', 'a'), 'utf8')).toBe('content');
    await expect(stat(join(dir, 'a.partial'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
