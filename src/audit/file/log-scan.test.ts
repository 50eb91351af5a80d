import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLogFile, type LogFile } from './log-file.js';
import { scanLines, type ScannedLine } from './log-scan.js';
import { recordingReads, tempDir, type RecordedRead } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let real: LogFile | undefined;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  await real?.close();
  real = undefined;
  await cleanup();
});

/** The text as a real file, read through a wrapper that records each read. */
async function fileWith(text: string): Promise<{ file: LogFile; reads: RecordedRead[] }> {
  const path = join(dir, 'audit.log');
  await writeFile(path, text);
  const opened = await openLogFile(path);
  real = opened;
  return recordingReads(opened);
}

async function scanAll(...args: Parameters<typeof scanLines>): Promise<ScannedLine[]> {
  const lines: ScannedLine[] = [];
  for await (const line of scanLines(...args)) lines.push(line);
  return lines;
}

describe('scanLines', () => {
  it('yields lines that span chunk boundaries whole, with their byte offsets', async () => {
    const { file } = await fileWith('alpha\nbravo-charlie\nd\n\nécho\n');
    const lines = await scanAll(file, undefined, 4);
    expect(lines).toEqual([
      { offset: 0, length: 5, text: 'alpha', terminated: true },
      { offset: 6, length: 13, text: 'bravo-charlie', terminated: true },
      { offset: 20, length: 1, text: 'd', terminated: true },
      { offset: 22, length: 0, text: '', terminated: true },
      { offset: 23, length: 5, text: 'écho', terminated: true },
    ]);
  });

  it('a last line without its newline (a torn write) is yielded unterminated', async () => {
    const { file } = await fileWith('one\ntwo-and-a-half');
    const lines = await scanAll(file, undefined, 4);
    expect(lines).toEqual([
      { offset: 0, length: 3, text: 'one', terminated: true },
      { offset: 4, length: 14, text: 'two-and-a-half', terminated: false },
    ]);
  });

  it('reads in bounded chunks up to end and no further: later bytes are not scanned', async () => {
    const { file, reads } = await fileWith('aaaa\nbbbb\ncccc\ndddd\n');
    const lines = await scanAll(file, 10, 4);
    expect(lines.map((l) => l.text)).toEqual(['aaaa', 'bbbb']);
    expect(reads).toEqual([
      { position: 0, length: 4 },
      { position: 4, length: 4 },
      { position: 8, length: 2 },
    ]);
  });

  it('from a line start to an end within a line: the cut line is yielded unterminated', async () => {
    const { file } = await fileWith('aaaa\nbbbb\ncccc\ndddd\n');
    const lines = await scanAll(file, 13, 3, 5);
    expect(lines).toEqual([
      { offset: 5, length: 4, text: 'bbbb', terminated: true },
      { offset: 10, length: 3, text: 'ccc', terminated: false },
    ]);
  });
});
