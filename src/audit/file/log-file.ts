import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The narrow file interface the log needs: positional reads and writes (never O_APPEND,
 * whose writes ignore the position on Linux), fsync and truncate. Tests wrap it to count
 * fsyncs or inject failures.
 */
export interface LogFile {
  size(): Promise<number>;
  /** Reads up to length bytes at position; returns the bytes read (fewer at end of file). */
  read(length: number, position: number): Promise<Buffer>;
  /** Writes the whole buffer at position. */
  write(data: Buffer, position: number): Promise<void>;
  /** Makes written data durable (fdatasync). */
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export type OpenLogFile = (path: string) => Promise<LogFile>;

// Stryker disable next-line BlockStatement: only a crash shows a directory entry that was not made durable
async function syncDirectory(path: string): Promise<void> {
  const dir = await open(dirname(path), constants.O_RDONLY);
  // Stryker disable next-line BlockStatement: as above (the close in finally is tested: no descriptor leaks)
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Opens (creating if needed) the log file for positional reads and writes. */
export const openLogFile: OpenLogFile = async (path) => {
  const handle = await open(path, constants.O_RDWR | constants.O_CREAT, 0o640);
  const { size } = await handle.stat();
  // A new file's directory entry must be durable too, or a crash can lose the whole file.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a directory fsync is seen only after a crash
  if (size === 0) await syncDirectory(path);
  return {
    size: async () => (await handle.stat()).size,
    read: async (length, position) => {
      const buffer = Buffer.alloc(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    },
    write: async (data, position) => {
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await handle.write(data, written, data.length - written, position + written);
        written += bytesWritten;
      }
    },
    sync: () => handle.datasync(),
    truncate: (length) => handle.truncate(length),
    close: () => handle.close(),
  };
};
