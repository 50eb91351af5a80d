import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArbiterError } from '../../model/index.js';
import type { AuditEntry } from '../audit-log.js';
import { EntryIndex } from './entry-index.js';
import { readEntries } from './entry-reader.js';
import { openLogFile, type LogFile } from './log-file.js';
import { event, recordingReads, tempDir, writeIndexedLines, type RecordedRead } from './test-fixtures.js';

const MiB = 1 << 20;

let dir: string;
let cleanup: () => Promise<void>;
let opened: LogFile[];
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  opened = [];
});
afterEach(async () => {
  await Promise.all(opened.map((f) => f.close()));
  await cleanup();
});

/** An entry whose line is padded to `lineBytes` when given (the reader checks only shape and seq). */
function entry(seq: number, lineBytes?: number): AuditEntry {
  const base: AuditEntry = {
    ...event(),
    id: `e-${seq}`,
    seq,
    previous_hash: 'p',
    hash: 'h',
    data: { pad: '' },
  };
  if (lineBytes === undefined) return base;
  const padding = lineBytes - JSON.stringify(base).length;
  return { ...base, data: { pad: 'x'.repeat(padding) } };
}

/**
 * Writes the lines to a real file and indexes `indexed` (the entries the log believes
 * are there, the written ones by default); reads go through a wrapper that records them.
 */
async function logOf(
  written: AuditEntry[],
  indexed: AuditEntry[] = written,
): Promise<{ file: LogFile; index: EntryIndex; reads: RecordedRead[] }> {
  const path = join(dir, 'audit.log');
  const index = await writeIndexedLines(path, written, indexed);
  const real = await openLogFile(path);
  opened.push(real);
  return { ...recordingReads(real), index };
}

function bytesOf(e: AuditEntry): number {
  return Buffer.byteLength(JSON.stringify(e));
}

describe('readEntries', () => {
  it('returns the entries in the order asked, reading adjacent lines in one read', async () => {
    const entries = [1, 2, 3, 4].map((seq) => entry(seq));
    const { file, index, reads } = await logOf(entries);
    const got = await readEntries(file, index, [3, 1, 0, 2, 1]);
    expect(got.map((e) => e.seq)).toEqual([4, 2, 1, 3, 2]);
    expect(got[0]).toEqual(entries[3]);
    const total = entries.reduce((sum, e) => sum + bytesOf(e) + 1, 0);
    expect(reads).toEqual([{ position: 0, length: total - 1 }]);
  });

  it('reads lines that are not adjacent separately, not the bytes between them', async () => {
    const entries = [1, 2, 3].map((seq) => entry(seq, 500 + seq));
    const { file, index, reads } = await logOf(entries);
    const got = await readEntries(file, index, [0, 2]);
    expect(got.map((e) => e.seq)).toEqual([1, 3]);
    expect(reads).toEqual([
      { position: 0, length: 501 },
      { position: 501 + 1 + 502 + 1, length: 503 },
    ]);
  });

  it('reads at most 4 MiB at a time, a span of exactly 4 MiB in one read', async () => {
    // Lines 2 to 4 with their newlines between them fill exactly 4 MiB.
    const entries = [entry(1, 3 * MiB), entry(2, 3 * MiB), entry(3, 500), entry(4, MiB - 500 - 2)];
    const { file, index, reads } = await logOf(entries);
    const got = await readEntries(file, index, [0, 1, 2, 3]);
    expect(got.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(reads).toEqual([
      { position: 0, length: 3 * MiB },
      { position: 3 * MiB + 1, length: 4 * MiB },
    ]);
  });

  it('a line cut off the end of the file is unreadable: the file is shorter than expected', async () => {
    const entries = [1, 2, 3].map((seq) => entry(seq));
    const { file, index } = await logOf(entries);
    await file.truncate((await file.size()) - 10);
    const error = await readEntries(file, index, [2]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ArbiterError);
    expect(error).toMatchObject({
      code: 'INTERNAL',
      message: 'audit entry seq 3 is unreadable: the file is shorter than expected',
      details: { seq: 3 },
    });
  });

  it('a line that holds another seq than the index says is unreadable', async () => {
    // Same line lengths: the file was rewritten under the log with other seqs.
    const { file, index } = await logOf([entry(1), entry(7)], [entry(1), entry(2)]);
    await expect(readEntries(file, index, [0])).resolves.toEqual([entry(1)]);
    await expect(readEntries(file, index, [1])).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'audit entry seq 2 is unreadable: it now holds seq 7',
      details: { seq: 2 },
    });
  });
});
