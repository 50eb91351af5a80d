import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditLog, Checkpoint, RetentionAnchor } from '../audit-log.js';
import { storedText } from '../chain.js';
import { LineChainVerifier, type LineVerifyOptions } from '../export-verify.js';
import type { FileAuditLog } from '../file/file-audit-log.js';
import { event, openLog, tempDir } from '../file/test-fixtures.js';
import type { ArchiveKeepers } from './archive-keepers.js';
import { type ArchiveRequest, archiveAuditLog } from './audit-archiver.js';
import { AuditArchiver, archiveFileName } from './audit-archiver-service.js';
import { answeringUpTo, linesOf, withOverrides } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: Date;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  clock = new Date('2025-03-01T00:00:00.000Z');
});
afterEach(() => cleanup());

/** A log checkpointing every `every` entries, with checkpoint times from `clock`. */
function open(every = 10): Promise<FileAuditLog> {
  return openLog(join(dir, 'log'), { checkpointEvery: { entries: every, seconds: 3600 }, now: () => clock });
}

/** An archive run's request: by admin, to `file` in the test's folder. */
function archiveBefore(before: Date, file = 'a.jsonl'): ArchiveRequest {
  return { before, actor: 'admin', path: () => join(dir, file) };
}

/** Appends count entries, one simulated hour apart, waiting for the checkpoints they cause. */
async function appendHours(log: FileAuditLog, count: number, every = 10): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    clock = new Date(clock.getTime() + 3600_000);
    entries.push(
      await log.append(event({ timestamp: clock.toISOString(), decision_id: `dec-${clock.getTime()}` })),
    );
    if (entries.at(-1)!.seq % every === 0)
      await until(async () => (await log.checkpoints()).at(-1)?.seq === entries.at(-1)!.seq);
  }
  return entries;
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await condition()); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(await condition()).toBe(true);
}

function verifyLines(lines: string[], options: LineVerifyOptions = {}) {
  const verifier = new LineChainVerifier(options);
  lines.forEach((line, i) => verifier.pushLine(line, i + 1));
  return verifier.finish();
}

describe('archiving the oldest audit entries', () => {
  it('writes a verified archive up to the last checkpoint before the time, then trims the log and records the run', async () => {
    const log = await open();
    const entries = await appendHours(log, 35);
    // Checkpoints at seq 10, 20, 30; the one at 20 was taken at hour 20.
    const before = new Date(entries[20]!.timestamp); // after the checkpoint of seq 20, before that of 30
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    const result = await archiver.run(before, 'admin');

    expect(result.archive).toMatchObject({
      file: archiveFileName({ from_seq: 1, to_seq: 20 }),
      from_seq: 1,
      to_seq: 20,
      entries: 20,
    });
    const archivePath = join(dir, 'archives', result.archive!.file);
    const lines = await linesOf(archivePath);
    // The archive holds the stored bytes of seq 1..20, and verifies from genesis on its own.
    expect(lines).toEqual(entries.slice(0, 20).map(storedText));
    expect(verifyLines(lines)).toMatchObject({
      ok: true,
      head: { seq: 20, hash: entries[19]!.hash },
    });

    expect(result.retained).toMatchObject({
      from_seq: 21,
      anchor: { seq: 20, hash: entries[19]!.hash, archive: result.archive!.file },
    });
    const retained = await log.query({ order: 'asc', limit: 100 });
    expect(retained.entries[0]!.seq).toBe(21);
    // The run is in the chain: who, what, and the file's digest.
    const recorded = retained.entries.at(-1)!;
    expect(recorded).toMatchObject({
      event_type: 'audit.archived',
      actor_id: 'admin',
      data: { from_seq: 1, to_seq: 20, sha256: result.archive!.sha256, before: before.toISOString() },
    });

    // The archive and the retained entries verify as one chain.
    const retainedLines = retained.entries.map(storedText);
    expect(verifyLines([...lines, ...retainedLines])).toMatchObject({
      ok: true,
      start: { trusted: 'genesis' },
    });
    expect(await log.verify()).toMatchObject({ ok: true, retained: { from_seq: 21 } });
    await log.close();
  });

  it('archives again from where the last archive ended, and the archives chain on', async () => {
    const log = await open();
    const entries = await appendHours(log, 45);
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    const first = await archiver.run(new Date(entries[12]!.timestamp), 'admin');
    const second = await archiver.run(new Date(entries[33]!.timestamp), 'admin');
    expect(first.archive).toMatchObject({ from_seq: 1, to_seq: 10 });
    expect(second.archive).toMatchObject({ from_seq: 11, to_seq: 30 });
    const files = (await readdir(join(dir, 'archives'))).sort();
    expect(files).toEqual([first.archive!.file, second.archive!.file]);
    const all = [
      ...(await linesOf(join(dir, 'archives', files[0]!))),
      ...(await linesOf(join(dir, 'archives', files[1]!))),
    ];
    expect(verifyLines(all)).toMatchObject({ ok: true, head: { seq: 30 } });
    // The second archive on its own continues from the first's end, which it names.
    const secondOnly = verifyLines(await linesOf(join(dir, 'archives', files[1]!)), {
      start: { seq: 10, hash: entries[9]!.hash },
    });
    expect(secondOnly).toMatchObject({ ok: true, head: { seq: 30 } });
    await log.close();
  });

  it('archives nothing when no checkpoint past the retained start is older than the time', async () => {
    const log = await open();
    const entries = await appendHours(log, 15);
    const result = await archiveAuditLog(log, archiveBefore(new Date(entries[5]!.timestamp)));
    expect(result).toMatchObject({ archive: null, retained: { from_seq: 1, anchor: null } });
    expect(result.message).toBe(
      `nothing to archive: no checkpoint after seq 0 was taken before ${entries[5]!.timestamp}`,
    );
    expect((await log.query({ order: 'asc', limit: 1 })).total).toBe(15);
    await log.close();
  });

  it('leaves an existing file that is not this archive, and the log, as they are', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const path = join(dir, 'taken.jsonl');
    await writeFile(path, "someone else's file\n");
    await expect(
      archiveAuditLog(log, { before: new Date(entries[22]!.timestamp), actor: 'admin', path: () => path }),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/exists and is not the archive of seq 1..20/),
    });
    expect(await readFile(path, 'utf8')).toBe("someone else's file\n");
    expect((await log.retained()).from_seq).toBe(1);
    expect((await log.query({ order: 'asc', limit: 1 })).total).toBe(25);
    await log.close();
  });

  it('reuses a complete archive an interrupted run left, and refuses a second run at the same time', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    const before = new Date(entries[22]!.timestamp);
    // A run killed after writing: the archive is there, the log untouched.
    let stop = true;
    await expect(
      archiver.run(before, 'admin', {
        onStep: () => {
          if (stop) throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    expect((await log.retained()).from_seq).toBe(1);
    stop = false;
    const [rerun, concurrent] = await Promise.allSettled([
      archiver.run(before, 'admin'),
      archiver.run(before, 'admin'),
    ]);
    expect(concurrent).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT' } });
    expect(rerun).toMatchObject({ status: 'fulfilled', value: { archive: { from_seq: 1, to_seq: 20 } } });
    expect((await log.retained()).from_seq).toBe(21);
    await log.close();
  });
});

async function archivedEntries(log: AuditLog): Promise<AuditEntry[]> {
  return (await log.query({ event_type: 'audit.archived', order: 'asc', limit: 100 })).entries;
}

describe('what an archive run says and records', () => {
  it('names the range, count and file archived, and records the retention anchor in its entry', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const result = await new AuditArchiver(log, join(dir, 'archives')).run(
      new Date(entries[22]!.timestamp),
      'admin',
    );
    expect(result.message).toBe('archived seq 1..20 (20 entries) to audit-000000000001-000000000020.jsonl');
    const path = join(dir, 'archives', result.archive!.file);
    const content = await readFile(path);
    expect(result.archive).toMatchObject({
      bytes: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    const [recorded] = await archivedEntries(log);
    expect(recorded!.data.anchor).toEqual(result.retained.anchor);
    expect(result.retained.anchor).toMatchObject({
      seq: 20,
      hash: entries[19]!.hash,
      entry_id: entries[19]!.id,
      checkpoint_time: entries[19]!.timestamp,
      archive: result.archive!.file,
    });
    await log.close();
  });

  it('a second run at the same time archives nothing, and says after which seq it looked', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const before = new Date(entries[22]!.timestamp);
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    await archiver.run(before, 'admin');
    const again = await archiver.run(before, 'admin');
    expect(again).toMatchObject({ archive: null, retained: { from_seq: 21 } });
    expect(again.message).toBe(
      `nothing to archive: no checkpoint after seq 20 was taken before ${before.toISOString()}`,
    );
    expect(await archivedEntries(log)).toHaveLength(1);
    await log.close();
  });

  it('refuses a time that is not a time, archiving nothing', async () => {
    const log = await open();
    await appendHours(log, 12);
    await expect(archiveAuditLog(log, archiveBefore(new Date('not a time')))).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'before is not a valid time',
    });
    expect((await log.retained()).from_seq).toBe(1);
    await log.close();
  });
});

describe('which checkpoint ends an archive', () => {
  it('only one taken strictly before the time: a checkpoint taken at that very time is not', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const checkpoint20 = (await log.checkpoints()).find((c) => c.seq === 20)!;
    const result = await archiveAuditLog(log, archiveBefore(new Date(checkpoint20.time)));
    expect(result.archive).toMatchObject({ from_seq: 1, to_seq: 10 });
    expect(entries[9]!.timestamp < checkpoint20.time).toBe(true);
    await log.close();
  });

  it('one at the head of the log, and one at the first retained entry', async () => {
    const log = await open(1);
    const entries = await appendHours(log, 3, 1);
    // Checkpoints at every seq: the one at seq 1 was taken at the first entry's hour.
    const first = await archiveAuditLog(
      log,
      archiveBefore(new Date(Date.parse(entries[0]!.timestamp) + 1), 'first.jsonl'),
    );
    expect(first.archive).toMatchObject({ from_seq: 1, to_seq: 1 });
    // The audit.archived entry is seq 4; its checkpoint is the head.
    await until(async () => (await log.checkpoints()).at(-1)?.seq === 4);
    const toHead = await archiveAuditLog(
      log,
      archiveBefore(new Date('2100-01-01T00:00:00.000Z'), 'second.jsonl'),
    );
    expect(toHead.archive).toMatchObject({ from_seq: 2, to_seq: 4 });
    await log.close();
  });

  it('never one past the head the log holds', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const beyond: Checkpoint = {
      seq: 40,
      hash: `sha256:${'0'.repeat(64)}`,
      entry_id: 'gone',
      time: entries[0]!.timestamp,
    };
    const truncated = withOverrides(log, {
      checkpoints: async () => [...(await log.checkpoints()), beyond],
    });
    const result = await archiveAuditLog(truncated, archiveBefore(new Date('2100-01-01T00:00:00.000Z')));
    expect(result.archive).toMatchObject({ from_seq: 1, to_seq: 20 });
    await log.close();
  });
});

describe('what the keepers need', () => {
  /** Keepers that keep `seq` (if any) and note each call, in order, with the retained start then. */
  function keepers(log: AuditLog, seq: number | undefined, calls: string[] = []): ArchiveKeepers {
    return {
      oldestInUse: () => {
        calls.push('oldestInUse');
        return Promise.resolve(
          seq === undefined ? undefined : { seq, reason: `decision at ${seq} waits for review` },
        );
      },
      carryOver: async (cut, actor) => {
        calls.push(`carryOver ${cut.seq} by ${actor} (retained from ${(await log.retained()).from_seq})`);
      },
    };
  }

  it('the cut stays before the oldest entry in use, and the message says which and why', async () => {
    const log = await open();
    const entries = await appendHours(log, 35);
    const calls: string[] = [];
    // Asked what is in use only once the checkpoints are read: all they cover is in the log.
    const watched = withOverrides(log, {
      checkpoints: () => {
        calls.push('checkpoints');
        return log.checkpoints();
      },
    });
    const result = await archiveAuditLog(watched, {
      ...archiveBefore(new Date(entries[33]!.timestamp)),
      keepers: keepers(log, 25, calls),
    });
    expect(result.archive).toMatchObject({ from_seq: 1, to_seq: 20 });
    expect(result.kept).toEqual({ seq: 25, reason: 'decision at 25 waits for review' });
    expect(result.message).toBe(
      'archived seq 1..20 (20 entries) to a.jsonl; entries from seq 25 on stay: decision at 25 waits for review',
    );
    // Carried over before anything was removed.
    expect(calls).toEqual(['checkpoints', 'oldestInUse', 'carryOver 20 by admin (retained from 1)']);
    expect((await log.query({ order: 'asc', limit: 1 })).entries[0]!.seq).toBe(21);
    await log.close();
  });

  it('an entry in use at a checkpoint keeps that checkpoint too; one past every due checkpoint changes nothing', async () => {
    const log = await open();
    const entries = await appendHours(log, 35);
    const atCheckpoint = await archiveAuditLog(log, {
      ...archiveBefore(new Date(entries[33]!.timestamp), 'first.jsonl'),
      keepers: keepers(log, 20),
    });
    expect(atCheckpoint.archive).toMatchObject({ to_seq: 10 });
    expect(atCheckpoint.kept?.seq).toBe(20);
    const pastDue = await archiveAuditLog(log, {
      ...archiveBefore(new Date(entries[33]!.timestamp), 'second.jsonl'),
      keepers: keepers(log, 31),
    });
    expect(pastDue.archive).toMatchObject({ from_seq: 11, to_seq: 30 });
    expect(pastDue.kept).toBeUndefined();
    expect(pastDue.message).toBe('archived seq 11..30 (20 entries) to second.jsonl');
    await log.close();
  });

  it('archives nothing when the oldest entry in use comes before every due checkpoint, and says so', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const calls: string[] = [];
    const before = new Date(entries[23]!.timestamp);
    const archiver = new AuditArchiver(log, join(dir, 'archives'), keepers(log, 3, calls));
    const result = await archiver.run(before, 'admin');
    expect(result).toMatchObject({ archive: null, kept: { seq: 3 }, retained: { from_seq: 1 } });
    expect(result.message).toBe(
      `nothing to archive: no checkpoint after seq 0 was taken before ${before.toISOString()}; entries from seq 3 on stay: decision at 3 waits for review`,
    );
    expect(calls).toEqual(['oldestInUse']);
    expect((await log.query({ order: 'asc', limit: 1 })).total).toBe(25);
    await log.close();
  });

  it('removes nothing when carrying over fails; the rerun carries over again and finishes', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const request = archiveBefore(new Date(entries[22]!.timestamp));
    const failing: ArchiveKeepers = {
      ...keepers(log, undefined),
      carryOver: () => Promise.reject(new Error('audit log unavailable')),
    };
    await expect(archiveAuditLog(log, { ...request, keepers: failing })).rejects.toThrow(
      'audit log unavailable',
    );
    expect((await log.retained()).from_seq).toBe(1);
    const calls: string[] = [];
    const rerun = await archiveAuditLog(log, { ...request, keepers: keepers(log, undefined, calls) });
    expect(rerun.archive).toMatchObject({ from_seq: 1, to_seq: 20 });
    expect(calls).toEqual(['oldestInUse', 'carryOver 20 by admin (retained from 1)']);
    await log.close();
  });
});

describe('an archive run that went wrong', () => {
  it('removes nothing when the archive it wrote does not verify, and keeps it aside as .partial', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    // Entries past seq 7 are lost while the archive is read from the log.
    const lossy = answeringUpTo(log, 7);
    const path = join(dir, 'a.jsonl');
    await expect(
      archiveAuditLog(lossy, archiveBefore(new Date(entries[22]!.timestamp))),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `the archive written to ${path}.partial does not verify (seq 8: log ends at seq 7 but checkpoint 20 exists: entries were truncated); nothing was removed from the log`,
    });
    expect((await linesOf(`${path}.partial`)).length).toBe(7);
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await log.retained()).from_seq).toBe(1);
    await log.close();
  });

  it('a rerun after a run stopped between the trim and its entry records the entry, once', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    const before = new Date(entries[22]!.timestamp);
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    await expect(
      archiver.run(before, 'admin', {
        onStep: (step) => {
          if (step === 'trimmed') throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    expect(await archivedEntries(log)).toEqual([]);

    const rerun = await archiver.run(before, 'operator');
    expect(rerun.archive).toBeNull();
    const recorded = await archivedEntries(log);
    expect(recorded).toHaveLength(1);
    const anchor = (await log.retained()).anchor!;
    expect(recorded[0]).toMatchObject({
      actor_id: 'operator',
      data: {
        file: anchor.archive,
        to_seq: 20,
        anchor: { ...anchor },
        note: 'recorded by a rerun: the run that archived these entries stopped before recording it',
      },
    });
    await archiver.run(before, 'operator');
    expect(await archivedEntries(log)).toHaveLength(1);
    await log.close();
  });

  it('a rerun after a run stopped between recording the anchor and cutting the entries finishes the cut', async () => {
    const log = await open();
    const entries = await appendHours(log, 25);
    // A backend that had stored the anchor, then stopped before removing the entries.
    let stored: RetentionAnchor | null = null;
    const halfTrimmed = withOverrides(log, {
      trim: async (anchor) => {
        if (!stored) {
          stored = anchor;
          throw new Error('killed');
        }
        await log.trim(anchor);
      },
      retained: async () => (stored ? { from_seq: stored.seq + 1, anchor: stored } : log.retained()),
    });
    const request = archiveBefore(new Date(entries[22]!.timestamp));
    await expect(archiveAuditLog(halfTrimmed, request)).rejects.toThrow('killed');
    expect((await log.retained()).from_seq).toBe(1);

    const rerun = await archiveAuditLog(halfTrimmed, request);
    expect(rerun.archive).toBeNull();
    expect((await log.retained()).from_seq).toBe(21);
    expect((await log.query({ order: 'asc', limit: 1 })).entries[0]!.seq).toBe(21);
    expect(await archivedEntries(log)).toHaveLength(1);
    await log.close();
  });
});

describe('AuditArchiver', () => {
  it('names archives by their zero-padded range, so that names sort in chain order', () => {
    expect(archiveFileName({ from_seq: 1, to_seq: 20 })).toBe('audit-000000000001-000000000020.jsonl');
    expect(archiveFileName({ from_seq: 123_456_789_012, to_seq: 123_456_789_999 })).toBe(
      'audit-123456789012-123456789999.jsonl',
    );
  });

  it('says what archiving through the API needs when it has no folder, and that a run is in progress', async () => {
    const log = await open();
    await expect(new AuditArchiver(log, undefined).run(new Date(), 'admin')).rejects.toMatchObject({
      code: 'CONFLICT',
      message:
        'archiving through the API needs --audit-archive-dir (a persistent folder) with --redis; or run arbiter audit archive --redis',
    });
    const archiver = new AuditArchiver(log, join(dir, 'archives'));
    const [, second] = await Promise.allSettled([
      archiver.run(new Date(), 'admin'),
      archiver.run(new Date(), 'admin'),
    ]);
    expect(second).toMatchObject({
      status: 'rejected',
      reason: { code: 'CONFLICT', message: 'an archive run is in progress; try again when it ends' },
    });
    await log.close();
  });
});
