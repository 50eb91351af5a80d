import { Readable } from 'node:stream';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditUnavailableError } from '../../model/index.js';
import type { AuditEntry, AuditEventInput } from '../audit-log.js';
import { canonicalJson, GENESIS_HASH } from '../chain.js';
import { verifyExportStream } from '../export-verify.js';
import { naiveRoot, referenceLeafInput } from '../merkle/test-naive-tree.js';
import { AUDIT_LOG_FILE, type FileAuditLog } from './file-audit-log.js';
import { LOCK_FILE } from './log-lock.js';
import {
  changingEvent,
  anchorAt,
  event,
  newProbe,
  openLog,
  probedFile,
  probedFiles,
  readLogLines,
  recordingLogger,
  tempDir,
} from './test-fixtures.js';
import { TREE_FILE } from './tree-file.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

function linesOf(text: string): AsyncIterable<string> {
  return Readable.from(text.split('\n'));
}

/** The tree holds exactly the entries stored in the log, as a naive tree over them hashes them. */
async function expectTreeOfLog(log: FileAuditLog): Promise<void> {
  const leaves = (await readLogLines(dir))
    .filter((line) => line !== '')
    .map((line) => referenceLeafInput(JSON.parse(line) as object));
  expect(await log.tree().size()).toBe(leaves.length);
  expect((await log.tree().root(leaves.length)).equals(naiveRoot(leaves))).toBe(true);
}

describe('FileAuditLog append and restart', () => {
  it('starts empty at genesis', async () => {
    const log = await openLog(dir);
    expect(await log.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });

  it('appends linked entries, one line each, and re-verifies after restart', async () => {
    const log = await openLog(dir);
    const first = await log.append(event());
    const second = await log.append(event({ decision_id: 'dec-2' }));
    expect(first.id).toMatch(/^aud_[0-9a-f-]{36}$/);
    expect(first).toMatchObject({ seq: 1, previous_hash: GENESIS_HASH });
    expect(second).toMatchObject({ seq: 2, previous_hash: first.hash });
    await log.close();

    const lines = await readLogLines(dir);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[1]!)).toEqual(second);

    const reopened = await openLog(dir);
    expect(await reopened.head()).toEqual({ seq: 2, hash: second.hash });
    expect(await reopened.verify()).toMatchObject({ ok: true, entries_checked: 2 });
    expect(await reopened.get(first.id)).toEqual(first);
    const third = await reopened.append(event());
    expect(third).toMatchObject({ seq: 3, previous_hash: second.hash });
    await reopened.close();
  });

  it('writes an export that verifies offline', async () => {
    const log = await openLog(dir, { checkpointEvery: { entries: 3, seconds: 3600 } });
    for (let i = 0; i < 10; i += 1) await log.append(event());
    await log.close();
    const text = await readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
    const checkpoints = JSON.parse(await readFile(join(dir, 'checkpoints.json'), 'utf8')) as {
      checkpoints: [];
    };
    const report = await verifyExportStream(linesOf(text), { checkpoints: checkpoints.checkpoints });
    expect(report).toMatchObject({ ok: true, entries_checked: 10, checkpoints_checked: 4 });
  });

  it('rejects appends and trims after close and resolves pending ones before closing', async () => {
    const log = await openLog(dir);
    const pending = Promise.all([log.append(event()), log.append(event())]);
    await log.close();
    const entries = await pending;
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    const closed = { name: 'AuditUnavailableError', message: 'the audit log is closed' };
    await expect(log.append(event())).rejects.toMatchObject(closed);
    await expect(log.trim(anchorAt(entries[0]))).rejects.toMatchObject(closed);
    expect(await readLogLines(dir)).toHaveLength(3);
  });

  it('a second close does nothing: the lock a later owner took stays', async () => {
    const log = await openLog(dir);
    await log.close();
    const next = await openLog(dir);
    await log.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    await next.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('a close called while another runs waits for it: the queued append is written and the lock let go', async () => {
    const log = await openLog(dir);
    let written: AuditEntry | undefined;
    const appending = log.append(event()).then((entry) => (written = entry));
    const first = log.close();
    await log.close();
    expect(written?.seq).toBe(1);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    await Promise.all([first, appending]);
  });

  it('rejects an event with an unparsable timestamp without touching the chain', async () => {
    const log = await openLog(dir);
    await expect(log.append(event({ timestamp: 'yesterday' }))).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'audit event timestamp "yesterday" is not ISO 8601',
    });
    expect((await log.append(event())).seq).toBe(1);
    await log.close();
  });

  it('refuses an event JSON cannot hold on its own: the appends of the same batch land', async () => {
    const log = await openLog(dir);
    const results = await Promise.allSettled([
      log.append(event()),
      log.append(event({ data: { amount: Number.NaN } })),
      log.append(event()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.seq] : []))).toEqual([1, 2]);
    await log.close();
  });

  it('fails the batch of an event that changed after append() checked it, and appends on', async () => {
    const log = await openLog(dir);
    await expect(log.append(changingEvent(event()))).rejects.toThrow(
      'BigInt is not allowed in canonical JSON',
    );
    expect((await log.append(event())).seq).toBe(1);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });

  it("refuses an event with a member named hash, which would sit beside the entry's own hash", async () => {
    const log = await openLog(dir);
    const results = await Promise.allSettled([
      log.append(event()),
      log.append({ ...event(), hash: 'sha256:chosen' } as AuditEventInput),
      log.append(event()),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.seq : r.reason))).toEqual([
      1,
      expect.objectContaining({
        code: 'INTERNAL',
        message: 'audit event has a member named hash, which only its entry may have',
      }),
      2,
    ]);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });
});

describe('FileAuditLog group commit', () => {
  it('500 concurrent appends form a gap-free chain with far fewer fsyncs', async () => {
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe), maxBatchEntries: 100 });
    const entries = await Promise.all(
      Array.from({ length: 500 }, (_, i) => log.append(event({ decision_id: `dec-${i}` }))),
    );
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(probe.syncs).toBeLessThanOrEqual(10);
    expect(probe.writes).toBe(probe.syncs);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 500 });
    await log.close();
  });

  it('batches appends that arrive while a flush is in flight', async () => {
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe) });
    const waves: Promise<AuditEntry>[] = [];
    for (let wave = 0; wave < 5; wave += 1) {
      for (let i = 0; i < 40; i += 1) waves.push(log.append(event()));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const entries = await Promise.all(waves);
    expect(new Set(entries.map((e) => e.seq)).size).toBe(200);
    expect(probe.syncs).toBeLessThan(50);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });

  it('a failed write rejects the whole batch, leaves no partial line, and the head stays', async () => {
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe) });
    const good = await log.append(event());
    probe.failNextWrite = true;
    const batch = await Promise.allSettled([log.append(event()), log.append(event()), log.append(event())]);
    expect(batch.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of batch) {
      const reason = (r as PromiseRejectedResult).reason as AuditUnavailableError;
      expect(reason).toBeInstanceOf(AuditUnavailableError);
      expect(reason.message).toBe('the audit log could not store the entries');
      expect(reason.cause).toMatchObject({ code: 'ENOSPC' });
    }
    expect(await log.head()).toEqual({ seq: 1, hash: good.hash });
    expect(await readLogLines(dir)).toEqual([canonicalJson(good), '']);
    const next = await log.append(event());
    expect(next).toMatchObject({ seq: 2, previous_hash: good.hash });
    expect((await log.verify()).ok).toBe(true);
    // The tree took the failed batch's leaves beside the log; they were cut back with it.
    await expectTreeOfLog(log);
    await log.close();
  });

  it('a failed write it could not cut off is logged, cut before the next write, and costs nothing after', async () => {
    const probe = newProbe();
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { openFile: probedFile(probe), logger });
    const good = await log.append(event());
    probe.failNextWrite = true;
    probe.failNextTruncate = true;
    // Three large entries: their half-written bytes outlast the small entry written next.
    const large = () => log.append(event({ data: { note: 'x'.repeat(2000) } }));
    const failed = await Promise.allSettled([large(), large(), large()]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(logged).toEqual([
      {
        level: 'error',
        details: { err: expect.objectContaining({ code: 'EIO' }) },
        message: 'audit log could not truncate a failed write; retrying before the next write',
      },
    ]);
    expect((await readLogLines(dir)).length).toBe(3); // the good line, then the torn bytes
    const next = await log.append(event());
    expect(await readLogLines(dir)).toEqual([canonicalJson(good), canonicalJson(next), '']);
    // Once cut, a batch is one write and one fsync again, with no truncate before it.
    const before = { ...probe };
    await log.append(event());
    expect(probe).toMatchObject({
      writes: before.writes + 1,
      syncs: before.syncs + 1,
      truncates: before.truncates,
    });
    await log.close();
    const reopened = await openLog(dir);
    expect(await reopened.verify()).toMatchObject({ ok: true, entries_checked: 3 });
    await reopened.close();
  });

  it('a tree file it could not cut back after a failed write is logged, and the next append overwrites its records', async () => {
    const logProbe = newProbe();
    const treeProbe = newProbe();
    const { logged, logger } = recordingLogger();
    const openFile = probedFiles({ [AUDIT_LOG_FILE]: logProbe, [TREE_FILE]: treeProbe });
    const log = await openLog(dir, { openFile, logger });
    const good = await log.append(event());
    logProbe.failNextWrite = true;
    treeProbe.failNextTruncate = true;
    await expect(log.append(event())).rejects.toThrow('the audit log could not store the entries');
    expect(logged).toEqual([
      {
        level: 'error',
        details: { err: expect.objectContaining({ code: 'EIO' }) },
        message:
          'audit tree file could not be cut back after a failed write; the next append overwrites its records past the end',
      },
    ]);
    // The log itself was cut: nothing of the failed batch remains in it.
    expect(await readLogLines(dir)).toEqual([canonicalJson(good), '']);
    // The failed batch's leaf is no part of the tree, now or after the next append.
    await expectTreeOfLog(log);
    await log.append(event());
    await expectTreeOfLog(log);
    await log.close();
    const reopened = await openLog(dir);
    await expectTreeOfLog(reopened);
    expect(await reopened.verify()).toMatchObject({ ok: true, entries_checked: 2 });
    await reopened.close();
  });

  it('a failed fsync rejects the batch and removes its bytes', async () => {
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe) });
    probe.failNextSync = true;
    await expect(log.append(event())).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(await readLogLines(dir)).toEqual(['']);
    expect((await log.append(event())).seq).toBe(1);
    await log.close();
  });
});

describe('FileAuditLog verify during appends', () => {
  it('reports ok while appends and checkpoints keep landing', async () => {
    const log = await openLog(dir, { checkpointEvery: { entries: 7, seconds: 3600 } });
    for (let i = 0; i < 50; i += 1) await log.append(event());
    const appends = Promise.all(Array.from({ length: 300 }, () => log.append(event())));
    const reports = await Promise.all([log.verify(), log.verify(), appends.then(() => log.verify())]);
    for (const report of reports) expect(report).toMatchObject({ ok: true });
    expect(reports[2].entries_checked).toBe(350);
    await log.close();
  });
});

describe('FileAuditLog subscribe', () => {
  it('notifies after the entry is durable; a throwing listener breaks nothing and is logged', async () => {
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    const seen: number[] = [];
    const bug = new Error('listener bug');
    log.subscribe(() => {
      throw bug;
    });
    const unsubscribe = log.subscribe((entry) => seen.push(entry.seq));
    // Read at the moment of each notification, so the check sees the file as it was then.
    const inFileWhenNotified: boolean[] = [];
    log.subscribe((entry) => {
      const lines = readFileSync(join(dir, AUDIT_LOG_FILE), 'utf8').split('\n');
      inFileWhenNotified.push(lines.includes(canonicalJson(entry)));
    });
    await log.append(event());
    unsubscribe();
    await log.append(event());
    expect(seen).toEqual([1]);
    expect(inFileWhenNotified).toEqual([true, true]);
    expect(logged).toEqual(
      [1, 2].map((seq) => ({
        level: 'warn',
        details: { err: bug, seq },
        message: 'audit subscriber threw; ignored',
      })),
    );
    await log.close();
  });
});

describe('FileAuditLog checkpoints', () => {
  it('checkpoints every N entries, keeps the newest K, and once more on close', async () => {
    const log = await openLog(dir, { checkpointEvery: { entries: 5, seconds: 3600 }, retainCheckpoints: 3 });
    for (let i = 0; i < 23; i += 1) await log.append(event());
    await log.close();
    const { checkpoints } = JSON.parse(await readFile(join(dir, 'checkpoints.json'), 'utf8')) as {
      checkpoints: { seq: number }[];
    };
    expect(checkpoints.map((c) => c.seq)).toEqual([15, 20, 23]);
  });

  it('checkpoints after T seconds when fewer than N entries arrived', async () => {
    const log = await openLog(dir, { checkpointEvery: { entries: 1000, seconds: 0.05 } });
    await log.append(event());
    // Written by the timer (bounded wait); no checkpoints.json before that.
    const checkpointSeqs = () =>
      readFile(join(dir, 'checkpoints.json'), 'utf8').then(
        (text) => (JSON.parse(text) as { checkpoints: { seq: number }[] }).checkpoints.map((c) => c.seq),
        () => [],
      );
    await expect.poll(checkpointSeqs, { timeout: 10_000 }).toEqual([1]);
    await log.close();
  });
});
