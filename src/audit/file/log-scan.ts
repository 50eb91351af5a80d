import type { LogFile } from './log-file.js';

export interface ScannedLine {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Bytes of the line without its newline. */
  length: number;
  text: string;
  /** False only for a last line without a trailing newline (a torn write). */
  terminated: boolean;
}

const NEWLINE = 0x0a;

/** Streams the lines of the log file in bounded chunks, with their byte offsets; from `from`, a line's first byte. */
export async function* scanLines(
  file: LogFile,
  end: number = Number.POSITIVE_INFINITY,
  chunkBytes = 1 << 20,
  from = 0,
): AsyncGenerator<ScannedLine> {
  let carry: Buffer = Buffer.alloc(0);
  let carryOffset = from;
  let position = from;
  while (position < end) {
    const chunk = await file.read(Math.min(chunkBytes, end - position), position);
    if (chunk.length === 0) break;
    position += chunk.length;
    const buffer = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    let start = 0;
    for (let nl = buffer.indexOf(NEWLINE, start); nl !== -1; nl = buffer.indexOf(NEWLINE, start)) {
      const text = buffer.toString('utf8', start, nl);
      yield { offset: carryOffset + start, length: nl - start, text, terminated: true };
      start = nl + 1;
    }
    carry = buffer.subarray(start);
    carryOffset += start;
  }
  if (carry.length > 0) {
    yield { offset: carryOffset, length: carry.length, text: carry.toString('utf8'), terminated: false };
  }
}
