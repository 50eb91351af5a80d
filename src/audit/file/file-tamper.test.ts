import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { sealEntry, storedText } from '../chain.js';
import { AUDIT_LOG_FILE } from './file-audit-log.js';
import {
  event,
  newProbe,
  openLog,
  probedFile,
  readLogLines,
  recordingLogger,
  tempDir,
  writeLogText,
} from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** Writes n entries, checkpointing every `every`, and closes the log. */
async function seed(n: number, every = 1000): Promise<AuditEntry[]> {
  const log = await openLog(dir, { checkpointEvery: { entries: every, seconds: 3600 } });
  const entries: AuditEntry[] = [];
  for (let i = 1; i <= n; i += 1) entries.push(await log.append(event({ decision_id: `dec-${i}` })));
  await log.close();
  return entries;
}

async function editLines(edit: (lines: string[]) => string[]): Promise<void> {
  const lines = (await readLogLines(dir)).slice(0, -1);
  await writeLogText(
    dir,
    edit(lines)
      .map((l) => `${l}\n`)
      .join(''),
  );
}

describe('tampering is detected after restart', () => {
  it('a changed byte: verify names the seq and entry; later seqs are unverified; appends continue', async () => {
    const entries = await seed(10);
    await editLines((lines) => lines.map((l, i) => (i === 4 ? l.replace('"agent-1"', '"agent-X"') : l)));
    const log = await openLog(dir);
    const report = await log.verify();
    expect(report.ok).toBe(false);
    expect(report.break).toMatchObject({ seq: 5, entry_id: entries[4]!.id, line: 5 });
    expect(report.break?.reason).toMatch(/altered/);
    expect(await log.isVerified(4)).toBe(true);
    expect(await log.isVerified(5)).toBe(false);
    expect(await log.isVerified(9)).toBe(false);
    const next = await log.append(event());
    expect(next).toMatchObject({ seq: 11, previous_hash: entries[9]!.hash });
    expect(await log.isVerified(11)).toBe(false);
    await log.close();
  });

  it('a deleted line is a seq gap', async () => {
    await seed(10, 3);
    await editLines((lines) => lines.filter((_, i) => i !== 6));
    const log = await openLog(dir);
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 7 });
    expect(report.break?.reason).toMatch(/expected seq 7, found 8/);
    expect(await log.isVerified(6)).toBe(true);
    expect(await log.isVerified(8)).toBe(false);
    await log.close();
  });

  it('a truncated tail below a checkpoint is detected, and stays detected after new appends', async () => {
    await seed(12, 5);
    await editLines((lines) => lines.slice(0, 7));
    const log = await openLog(dir);
    expect(await log.head()).toMatchObject({ seq: 7 });
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 8 });
    expect(report.break?.reason).toMatch(/truncated/);
    for (let i = 0; i < 5; i += 1) await log.append(event());
    expect(await log.isVerified(7)).toBe(true);
    expect(await log.isVerified(10)).toBe(false);
    await log.close();
    const reopened = await openLog(dir);
    expect((await reopened.verify()).break?.reason).toMatch(/checkpoint at seq 10 names another hash/);
    await reopened.close();
  });

  it('checkpoints what is appended after a truncation, counting from the last checkpoint the log still holds', async () => {
    await seed(12, 5); // checkpoints at 5, 10 and 12 (on close)
    await editLines((lines) => lines.slice(0, 7));
    const log = await openLog(dir, { checkpointEvery: { entries: 2, seconds: 3600 } });
    await log.append(event());
    await log.append(event());
    await expect.poll(async () => (await log.checkpoints()).map((c) => c.seq)).toEqual([5, 8, 10, 12]);
    await log.close();
  });

  it('a consistent rewrite (all hashes recomputed) is caught by a checkpoint', async () => {
    await seed(12, 5);
    await editLines((lines) => {
      let previous: AuditEntry | null = null;
      return lines.map((line, i) => {
        const content: Partial<AuditEntry> = JSON.parse(line) as AuditEntry;
        delete content.hash;
        delete content.previous_hash;
        delete content.seq;
        const unchained = content as Parameters<typeof sealEntry>[0];
        const entry = sealEntry(i === 2 ? { ...unchained, outcome: 'DENY' } : unchained, previous);
        previous = entry;
        return storedText(entry);
      });
    });
    const log = await openLog(dir);
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 5 });
    expect(report.break?.reason).toMatch(/rewritten/);
    await log.close();
  });

  it('an unparsable line in the middle is reported with its line number and not repaired', async () => {
    await seed(5);
    await editLines((lines) => lines.map((l, i) => (i === 2 ? l.slice(0, 20) : l)));
    const before = await readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
    const log = await openLog(dir);
    const report = await log.verify();
    expect(report).toMatchObject({ ok: false, unparsable_lines: [3], break: { seq: 3, line: 3 } });
    expect(await log.isVerified(2)).toBe(true);
    expect(await log.isVerified(4)).toBe(false);
    expect((await log.query({ order: 'asc', limit: 10 })).entries.map((e) => e.seq)).toEqual([1, 2, 4, 5]);
    await log.close();
    expect((await readFile(join(dir, AUDIT_LOG_FILE), 'utf8')).startsWith(before)).toBe(true);
  });
});

describe('torn last line', () => {
  it('a last line without newline is cut off with a warning giving where, how much and which line', async () => {
    const entries = await seed(3);
    const text = await readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
    const torn = '{"id":"aud_torn","seq":4,"prev';
    await writeLogText(dir, `${text}${torn}`);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { offset: Buffer.byteLength(text), bytes: torn.length, line: 4 },
        message: 'audit log ends with a torn line (interrupted write); truncating it',
      },
    ]);
    expect(await readFile(join(dir, AUDIT_LOG_FILE), 'utf8')).toBe(text);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 3 });
    expect(await log.append(event())).toMatchObject({ seq: 4, previous_hash: entries[2]!.hash });
    await log.close();
  });

  it('a complete but unparsable last line (zeros after a crash) is cut off too', async () => {
    await seed(3);
    const text = await readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
    await writeLogText(dir, `${text}\u0000\u0000\u0000\n`);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { offset: Buffer.byteLength(text), bytes: 4, line: 4 },
        message: 'audit log ends with a torn line (interrupted write); truncating it',
      },
    ]);
    expect(await readFile(join(dir, AUDIT_LOG_FILE), 'utf8')).toBe(text);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });

  it('a whole entry whose newline was not written is cut off: its write was never acknowledged', async () => {
    const entries = await seed(3);
    const lines = await readLogLines(dir);
    await writeLogText(dir, `${lines.slice(0, 2).join('\n')}\n${lines[2]}`);
    const log = await openLog(dir);
    expect(await log.head()).toEqual({ seq: 2, hash: entries[1]!.hash });
    expect(await readLogLines(dir)).toEqual([...lines.slice(0, 2), '']);
    expect(await log.append(event())).toMatchObject({ seq: 3, previous_hash: entries[1]!.hash });
    await log.close();
  });
});

describe('lines that are not entries', () => {
  it('blank lines are passed over, not taken for a break or a torn write', async () => {
    const entries = await seed(3);
    const lines = await readLogLines(dir);
    await writeLogText(dir, `${lines[0]}\n\n${lines[1]}\n   \n${lines[2]}\n  \n`);
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toEqual([]);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 3 });
    expect(await log.append(event())).toMatchObject({ seq: 4, previous_hash: entries[2]!.hash });
    await log.close();
  });

  it('an unparsable line in the middle is logged at open as the break, with its line number', async () => {
    await seed(5);
    await editLines((lines) => lines.map((l, i) => (i === 2 ? l.slice(0, 20) : l)));
    const { logged, logger } = recordingLogger();
    const log = await openLog(dir, { logger });
    expect(logged).toEqual([
      {
        level: 'error',
        details: { break: expect.objectContaining({ seq: 3, line: 3 }) },
        message: 'audit chain is broken; new entries continue from the last one',
      },
    ]);
    await log.close();
  });
});

describe('isVerified', () => {
  it('reads only from the nearest checkpoint and caches the result', async () => {
    await seed(300, 50);
    const probe = newProbe();
    const log = await openLog(dir, { openFile: probedFile(probe) });
    const afterOpen = probe.readBytes;
    const fileBytes = (await readFile(join(dir, AUDIT_LOG_FILE))).length;
    expect(await log.isVerified(260)).toBe(true);
    const firstCost = probe.readBytes - afterOpen;
    expect(firstCost).toBeGreaterThan(0);
    expect(firstCost).toBeLessThan(fileBytes / 10);
    expect(await log.isVerified(255)).toBe(true);
    expect(probe.readBytes - afterOpen).toBe(firstCost);
    expect(await log.isVerified(0)).toBe(false);
    expect(await log.isVerified(301)).toBe(false);
    await log.close();
  });

  it('keeps a result for verifyCacheSeconds, then reads again', async () => {
    await seed(20, 5);
    const probe = newProbe();
    let clock = Date.parse('2025-01-02T00:00:00.000Z');
    const log = await openLog(dir, {
      openFile: probedFile(probe),
      verifyCacheSeconds: 30,
      now: () => new Date(clock),
    });
    expect(await log.isVerified(13)).toBe(true);
    const read = probe.readBytes;
    clock += 29_999;
    expect(await log.isVerified(13)).toBe(true);
    expect(probe.readBytes).toBe(read);
    clock += 2;
    expect(await log.isVerified(13)).toBe(true);
    expect(probe.readBytes).toBeGreaterThan(read);
    await log.close();
  });

  it('sees tampering that happened while the log was open', async () => {
    await seed(20, 5);
    const log = await openLog(dir, { verifyCacheSeconds: 0 });
    expect(await log.isVerified(13)).toBe(true);
    await editLines((lines) => lines.map((l, i) => (i === 11 ? l.replace('"ALLOW"', '"DENY!"') : l)));
    expect(await log.isVerified(13)).toBe(false);
    expect(await log.isVerified(10)).toBe(true);
    expect((await log.verify()).break).toMatchObject({ seq: 12 });
    await log.close();
  });
});
