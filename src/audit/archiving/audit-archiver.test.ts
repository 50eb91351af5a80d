import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { storedText } from '../chain.js';
import { LineChainVerifier, type LineVerifyOptions } from '../export-verify.js';
import type { FileAuditLog } from '../file/file-audit-log.js';
import { event, openLog, tempDir } from '../file/test-fixtures.js';
import { archiveAuditLog } from './audit-archiver.js';
import { AuditArchiver, archiveFileName } from './audit-archiver-service.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: Date;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  clock = new Date('2025-03-01T00:00:00.000Z');
});
afterEach(() => cleanup());

/** A log checkpointing every 10 entries, with checkpoint times from `clock`. */
function open(): Promise<FileAuditLog> {
  return openLog(join(dir, 'log'), { checkpointEvery: { entries: 10, seconds: 3600 }, now: () => clock });
}

/** Appends count entries, one simulated hour apart, waiting for the checkpoints they cause. */
async function appendHours(log: FileAuditLog, count: number): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    clock = new Date(clock.getTime() + 3600_000);
    entries.push(
      await log.append(event({ timestamp: clock.toISOString(), decision_id: `dec-${clock.getTime()}` })),
    );
    if (entries.at(-1)!.seq % 10 === 0)
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

async function linesOf(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '');
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
    const result = await archiveAuditLog(log, {
      before: new Date(entries[5]!.timestamp),
      actor: 'admin',
      path: () => join(dir, 'a.jsonl'),
    });
    expect(result).toMatchObject({ archive: null, retained: { from_seq: 1, anchor: null } });
    expect(result.message).toMatch(/nothing to archive/);
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
