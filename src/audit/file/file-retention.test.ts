import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint, RetentionAnchor } from '../audit-log.js';
import { referenceLeafInput } from '../merkle/test-naive-tree.js';
import { leafHash } from '../merkle/tree-hash.js';
import { verifyInclusion } from '../merkle/verify-inclusion.js';
import type { FileAuditLog } from './file-audit-log.js';
import { FileCheckpointStore } from './checkpoint-store.js';
import { LOCK_FILE, LogLock } from './log-lock.js';
import { RETENTION_FILE, RetentionFile } from './retention-file.js';
import { RETAINED_COPY_FILE } from './retained-copy.js';
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
import { spawn } from 'node:child_process';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

const ACTORS = ['agent-a', 'agent-b', 'agent-c'];

async function appendMany(log: FileAuditLog, from: number, count: number): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for (let i = from; i < from + count; i += 1) {
    entries.push(
      await log.append(
        event({
          actor_id: ACTORS[i % 3]!,
          decision_id: `dec-${i}`,
          // Out of order now and then, as racing replicas write them.
          timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i % 7 === 3 ? i - 5 : i)).toISOString(),
          data: { i },
        }),
      ),
    );
  }
  return entries;
}

async function checkpoint(entry: AuditEntry): Promise<void> {
  const store = new FileCheckpointStore({ dir, retain: 10 });
  const c: Checkpoint = {
    seq: entry.seq,
    hash: entry.hash,
    entry_id: entry.id,
    time: '2025-01-02T00:00:00.000Z',
  };
  await store.save(c);
}

async function storedSeqs(): Promise<number[]> {
  return (await readLogLines(dir)).filter((l) => l !== '').map((l) => (JSON.parse(l) as AuditEntry).seq);
}

describe('trimming the file audit log at a retention anchor', () => {
  it('removes the archived entries from the file, and everything retained keeps working', async () => {
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    const entries = await appendMany(log, 0, 40);
    // A checkpoint of an entry that is archived next names nothing the log holds; it is ignored.
    await checkpoint(entries[9]!);
    await checkpoint(entries[24]!);
    await log.trim(anchorAt(entries[24]!));
    expect(logged).toEqual([
      {
        level: 'info',
        details: { anchor_seq: 25, archive: 'audit-a.jsonl', retained_from: 26 },
        message: 'archived audit entries cut off the log',
      },
    ]);

    expect(await storedSeqs()).toEqual(entries.slice(25).map((e) => e.seq));
    expect(await log.retained()).toEqual({ from_seq: 26, anchor: anchorAt(entries[24]!) });
    expect(JSON.parse(await readFile(join(dir, RETENTION_FILE), 'utf8'))).toEqual({
      anchor: anchorAt(entries[24]!),
    });

    // Queries answer from the retained entries only, with exact totals, in both orders.
    const all = await log.query({ order: 'asc', limit: 100 });
    expect(all.entries.map((e) => e.seq)).toEqual(entries.slice(25).map((e) => e.seq));
    expect(all.total).toBe(15);
    const agentA = await log.query({ actor_id: 'agent-a', order: 'desc', limit: 3 });
    const expectedA = entries.slice(25).filter((e) => e.actor_id === 'agent-a');
    expect(agentA.total).toBe(expectedA.length);
    expect(agentA.entries.map((e) => e.seq)).toEqual(
      expectedA
        .reverse()
        .slice(0, 3)
        .map((e) => e.seq),
    );
    const since = entries[20]!.timestamp;
    const timed = await log.query({ since, order: 'asc', limit: 100 });
    expect(timed.entries.map((e) => e.seq)).toEqual(
      entries
        .slice(25)
        .filter((e) => e.timestamp >= since)
        .map((e) => e.seq),
    );
    expect(await log.get(entries[3]!.id)).toBeUndefined();
    expect(await log.byDecision('dec-3')).toEqual([]);
    expect((await log.get(entries[30]!.id))?.seq).toBe(31);

    // The chain verifies from the anchor; archived seqs are no longer "verified" here.
    const report = await log.verify();
    expect(report).toMatchObject({ ok: true, entries_checked: 15, head: { seq: 40 } });
    expect(report.retained).toEqual({ from_seq: 26, anchor: anchorAt(entries[24]!) });
    expect(await log.isVerified(26)).toBe(true);
    expect(await log.isVerified(40)).toBe(true);
    expect(await log.isVerified(25)).toBe(false);
    expect(await log.isVerified(3)).toBe(false);

    // Inclusion proofs of retained entries still verify against the whole tree.
    const tree = log.tree();
    const root = await tree.root(40);
    for (const entry of entries.slice(25)) {
      const proof = await tree.inclusionProof(entry.seq - 1, 40);
      expect(() =>
        verifyInclusion(entry.seq - 1, 40, leafHash(referenceLeafInput(entry)), proof, root),
      ).not.toThrow();
    }

    // New entries link on.
    const [next] = await appendMany(log, 40, 1);
    expect(next).toMatchObject({ seq: 41, previous_hash: entries[39]!.hash });
    await log.close();

    // And a reopened log is the same.
    const reopened = await openLog(dir);
    expect(await reopened.retained()).toEqual({ from_seq: 26, anchor: anchorAt(entries[24]!) });
    expect(await reopened.verify()).toMatchObject({ ok: true, entries_checked: 16, head: { seq: 41 } });
    expect(await reopened.isVerified(41)).toBe(true);
    await reopened.close();
  });

  it('keeps every entry appended while the file is being cut', async () => {
    const log = await openLog(dir, { maxBatchEntries: 5 });
    const entries = await appendMany(log, 0, 300);
    await checkpoint(entries[199]!);
    const during = Promise.all(
      Array.from({ length: 200 }, (_, i) => log.append(event({ decision_id: `during-${i}` }))),
    );
    await log.trim(anchorAt(entries[199]!));
    const appended = await during;
    expect(appended.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => 301 + i));
    const report = await log.verify();
    expect(report).toMatchObject({ ok: true, entries_checked: 300, head: { seq: 500 } });
    expect(await storedSeqs()).toEqual(Array.from({ length: 300 }, (_, i) => 201 + i));
    expect((await log.byDecision('during-199'))[0]?.seq).toBe(500);
    await log.close();
  });

  it('cuts at each newer anchor in turn', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 0, 30);
    await log.trim(anchorAt(entries[9]!));
    await log.trim(anchorAt(entries[19]!, 'audit-b.jsonl'));
    expect(await storedSeqs()).toEqual(entries.slice(20).map((e) => e.seq));
    expect(await log.retained()).toEqual({ from_seq: 21, anchor: anchorAt(entries[19]!, 'audit-b.jsonl') });
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 10 });
    await log.close();
  });

  it('continues from the anchor when every entry was archived', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 0, 10);
    await log.trim(anchorAt(entries[9]!));
    expect(await storedSeqs()).toEqual([]);
    await log.close();
    const reopened = await openLog(dir);
    const [next] = await appendMany(reopened, 10, 1);
    expect(next).toMatchObject({ seq: 11, previous_hash: entries[9]!.hash });
    expect(await reopened.verify()).toMatchObject({ ok: true, head: { seq: 11 } });
    await reopened.close();
  });

  it("refuses an anchor that is none, behind the current one, or not the entry at its seq, in the Redis log's words", async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 0, 30);
    const refused = (anchor: RetentionAnchor, code: string, message: string) =>
      expect(log.trim(anchor)).rejects.toMatchObject({ code, message });
    const notTheEntry = (anchor: RetentionAnchor) => {
      const entry = entries[anchor.seq - 1]!;
      return refused(
        anchor,
        'CONFLICT',
        `the audit entry at seq ${anchor.seq} is ${entry.id} with hash ${entry.hash}, not the anchor's ${anchor.entry_id} with hash ${anchor.hash}`,
      );
    };
    const [e19, e20] = [entries[18]!, entries[19]!];
    await refused({ ...anchorAt(e20), seq: 0 }, 'INVALID_REQUEST', 'not a retention anchor: seq 0');
    await refused({ ...anchorAt(e20), seq: 1.5 }, 'INVALID_REQUEST', 'not a retention anchor: seq 1.5');
    await refused(
      { ...anchorAt(e20), hash: undefined! },
      'INVALID_REQUEST',
      'not a retention anchor: seq 20',
    );
    await refused(
      { ...anchorAt(e20), seq: 41 },
      'CONFLICT',
      'the audit log holds no entry at seq 41: not a retention anchor',
    );
    await notTheEntry({ ...anchorAt(e20), hash: e19.hash });
    await notTheEntry({ ...anchorAt(e20), entry_id: e19.id });

    await log.trim(anchorAt(e20));
    await refused(
      anchorAt(entries[9]!),
      'CONFLICT',
      'the audit log is already archived up to seq 20; an anchor at seq 10 would move it back',
    );
    await refused(
      { ...anchorAt(e20), hash: e19.hash },
      'CONFLICT',
      `the audit log is archived up to seq 20 with another hash than ${e19.hash}`,
    );
    await notTheEntry({ ...anchorAt(entries[25]!), hash: entries[24]!.hash });
    // Nothing changed by the refusals; the same anchor again is a no-op.
    await log.trim(anchorAt(entries[19]!));
    expect(await storedSeqs()).toEqual(entries.slice(20).map((e) => e.seq));
    expect(await log.retained()).toMatchObject({ from_seq: 21 });
    await log.close();
  });

  it('finishes at open a cut that a crash interrupted after the anchor was recorded', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 0, 30);
    await log.close();
    // The state a crash right after recording the anchor leaves: anchor, uncut file.
    await new RetentionFile(dir).write(anchorAt(entries[14]!));
    await writeFile(join(dir, 'audit.jsonl.trim'), 'half a copy'); // a copy the crash cut short

    const { logged, logger } = recordingLogger();
    const reopened = await openLog(dir, { logger });
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { anchor_seq: 15 },
        message: 'finishing an interrupted archive: cutting archived entries off the log',
      },
    ]);
    expect(await storedSeqs()).toEqual(entries.slice(15).map((e) => e.seq));
    expect(await reopened.verify()).toMatchObject({ ok: true, entries_checked: 15, head: { seq: 30 } });
    await expect(readFile(join(dir, 'audit.jsonl.trim'))).rejects.toMatchObject({ code: 'ENOENT' });
    await reopened.close();
  });

  it('keeps the whole log when the copy fails, and a retry of the recorded anchor cuts it', async () => {
    const probe = newProbe();
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { openFile: probedFile(probe, RETAINED_COPY_FILE), logger });
    const entries = await appendMany(log, 0, 30);
    probe.failNextWrite = true;
    await expect(log.trim(anchorAt(entries[14]!))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(logged).toEqual([]);
    expect(await storedSeqs()).toEqual(entries.map((e) => e.seq));
    expect(await log.retained()).toEqual({ from_seq: 1, anchor: null });
    await expect(readFile(join(dir, RETAINED_COPY_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await log.get(entries[3]!.id))?.seq).toBe(4);
    const [next] = await appendMany(log, 30, 1);
    expect(next).toMatchObject({ seq: 31, previous_hash: entries[29]!.hash });

    await log.trim(anchorAt(entries[14]!));
    expect(await storedSeqs()).toEqual([...entries.slice(15), next!].map((e) => e.seq));
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 16 });
    await log.close();
  });

  it('refuses to open when the entry at the recorded anchor is not the anchor (the file was changed)', async () => {
    const log = await openLog(dir);
    const entries = await appendMany(log, 0, 10);
    await log.close();
    await new RetentionFile(dir).write({ ...anchorAt(entries[4]!), hash: 'a'.repeat(64) });
    await expect(openLog(dir)).rejects.toThrow(/not the retention anchor's/);
    // The file is left whole for an investigation.
    expect(await storedSeqs()).toHaveLength(10);
  });
});

describe('the file audit log lock', () => {
  it('refuses a second process while the owner runs, and takes over from one that is gone', async () => {
    const sleeper = spawn('sleep', ['30']);
    try {
      await writeFile(join(dir, LOCK_FILE), `${sleeper.pid}\n`);
      await expect(LogLock.acquire(dir)).rejects.toThrow(new RegExp(`in use by process ${sleeper.pid}`));
      await expect(openLog(dir)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      sleeper.kill('SIGKILL');
    }
    await new Promise((resolve) => sleeper.once('exit', resolve));
    const log = await openLog(dir);
    expect(await readFile(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    await log.close();
    await expect(readFile(join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
