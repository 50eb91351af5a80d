import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditUnavailableError } from '../../model/index.js';

export const LOCK_FILE = 'audit.lock';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One process at a time owns a file audit log: two writers would fork the chain, and an
 * archive run under a serving process would pull the file from under its index. The lock
 * file holds the owner's pid; one left by a process that is gone is taken over.
 */
export class LogLock {
  private constructor(private readonly path: string) {}

  static async acquire(dir: string): Promise<LogLock> {
    const path = join(dir, LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        const handle = await open(path, 'wx', 0o640);
        await handle.writeFile(`${process.pid}\n`);
        await handle.close();
        return new LogLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      // Stryker disable next-line StringLiteral: any stand-in for an unreadable lock parses to NaN, as '' does
      const owner = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      // A pid is positive: 0 and -n name process groups, which signal 0 always finds, and
      // NaN is a garbled file. Our own pid: a restarted container's previous process had it.
      if (owner > 0 && owner !== process.pid && isRunning(owner)) {
        throw new AuditUnavailableError(
          `the audit log in ${dir} is in use by process ${owner} (a running arbiter serve?): stop it first, or archive through POST /api/v1/audit/archive`,
        );
      }
      await unlink(path).catch(() => undefined);
    }
    throw new AuditUnavailableError(`cannot take the lock ${path}: another process keeps taking it`);
  }

  release(): Promise<void> {
    return unlink(this.path).catch(() => undefined);
  }
}
