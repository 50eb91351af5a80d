import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, ChainHead } from '../audit-log.js';
import { storedText } from '../chain.js';
import { verifyLogFile } from './file-verify.js';
import { openLogFile, type LogFile } from './log-file.js';
import { sealedChain, tempDir } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let opened: LogFile | undefined;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  await opened?.close();
  opened = undefined;
  await cleanup();
});

/** n linked entries; `lastPadBytes` lengthens the last one's line by that many bytes. */
function chain(n: number, actor = 'agent-1', lastPadBytes = 0): AuditEntry[] {
  return sealedChain(n, (i) => ({ actor_id: actor, data: { pad: i === n ? 'x'.repeat(lastPadBytes) : '' } }));
}

/** Writes the text as the log file; returns it opened and the text's length in bytes. */
async function fileWith(text: string): Promise<{ file: LogFile; bytes: number }> {
  const path = join(dir, 'audit.log');
  await writeFile(path, text);
  opened = await openLogFile(path);
  return { file: opened, bytes: Buffer.byteLength(text) };
}

function linesOf(entries: AuditEntry[]): string {
  return entries.map((e) => `${storedText(e)}\n`).join('');
}

function headOf(entry: AuditEntry): ChainHead {
  return { seq: entry.seq, hash: entry.hash };
}

describe('verifyLogFile', () => {
  it('an intact file that ends at the head the log holds verifies', async () => {
    const entries = chain(3);
    const { file, bytes } = await fileWith(linesOf(entries));
    const report = await verifyLogFile(file, bytes, headOf(entries[2]!), []);
    expect(report).toMatchObject({ ok: true, entries_checked: 3, head: headOf(entries[2]!) });
    expect(report.break).toBeUndefined();
  });

  it('entries cut off the end are a truncation, found at the first entry missing', async () => {
    const entries = chain(5);
    const written = Buffer.byteLength(linesOf(entries));
    const { file, bytes } = await fileWith(linesOf(entries.slice(0, 3)));
    const report = await verifyLogFile(file, written, headOf(entries[4]!), []);
    expect(report).toMatchObject({
      ok: false,
      head: headOf(entries[2]!),
      break: {
        seq: 4,
        reason: `the file ends at seq 3 (byte ${bytes}) but the log wrote up to seq 5: entries were truncated`,
      },
    });
  });

  it('a last line that lost its newline is a truncation, though its entry is whole', async () => {
    const entries = chain(3);
    const written = Buffer.byteLength(linesOf(entries));
    const { file } = await fileWith(linesOf(entries).slice(0, -1));
    const report = await verifyLogFile(file, written, headOf(entries[2]!), []);
    expect(report).toMatchObject({
      ok: false,
      break: {
        seq: 4,
        reason: `the file ends at seq 3 (byte ${written - 1}) but the log wrote up to seq 3: entries were truncated`,
      },
    });
  });

  it('a file as long as the log wrote but ending at an earlier seq is a truncation', async () => {
    const wrote = chain(5);
    const written = Buffer.byteLength(linesOf(wrote));
    const shorter = chain(3, 'agent-1', written - Buffer.byteLength(linesOf(chain(3))));
    const { file, bytes } = await fileWith(linesOf(shorter));
    expect(bytes).toBe(written);
    const report = await verifyLogFile(file, written, headOf(wrote[4]!), []);
    expect(report).toMatchObject({
      ok: false,
      break: {
        seq: 4,
        reason: `the file ends at seq 3 (byte ${written}) but the log wrote up to seq 5: entries were truncated`,
      },
    });
  });

  it('a consistent chain ending at another hash than the log wrote is a rewrite', async () => {
    const wrote = chain(3);
    const rewritten = chain(3, 'agent-X');
    const { file, bytes } = await fileWith(linesOf(rewritten));
    const report = await verifyLogFile(file, bytes, headOf(wrote[2]!), []);
    expect(report).toMatchObject({
      ok: false,
      head: headOf(rewritten[2]!),
      break: {
        seq: 3,
        reason: "the last entry's hash differs from the head this log wrote: the file was rewritten",
      },
    });
  });

  it('a chain break is reported as the chain found it, not as a truncation', async () => {
    const entries = chain(4);
    const { file } = await fileWith(linesOf([entries[0]!, entries[2]!]));
    const report = await verifyLogFile(file, 10_000, headOf(entries[3]!), []);
    expect(report.ok).toBe(false);
    expect(report.break).toMatchObject({ seq: 2, line: 2 });
    expect(report.break?.reason).toMatch(/expected seq 2, found 3/);
  });
});
