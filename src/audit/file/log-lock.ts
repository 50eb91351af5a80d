import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
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

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException).code === code;
}

/** Links `from` in at `to` unless something is there already. */
async function linkIfAbsent(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (err) {
    if (isCode(err, 'EEXIST')) return false;
    throw err;
  }
}

/** The lock's text, or undefined once it is gone. */
async function readLock(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    throw new AuditUnavailableError(`cannot read the lock ${path}: ${(err as Error).message}`);
  }
}

/**
 * Removes the lock at `path` if it still holds `judged`, the text its owner was judged
 * gone by. Unlinking by name instead would remove the lock another process took in the
 * meantime: the lock is moved aside first, where no other process acts on it, and put
 * back if it is not the one judged.
 */
export async function removeIfUnchanged(path: string, judged: string | undefined): Promise<void> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return; // another process removed it first
    throw err;
  }
  if ((await readLock(aside)) !== judged) await linkIfAbsent(aside, path);
  await unlink(aside);
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
    // Written aside and linked in, so the lock appears with its pid: created in place, it
    // would be empty for a moment, and another process reading it then would take it over.
    const draft = `${path}.${randomBytes(6).toString('hex')}`;
    await writeFile(draft, `${process.pid}\n`, { mode: 0o640 });
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        if (await linkIfAbsent(draft, path)) return new LogLock(path);
        const held = await readLock(path);
        // Stryker disable next-line StringLiteral: any stand-in for a vanished lock parses to NaN, as '' does
        const owner = Number.parseInt(held ?? '', 10);
        // A pid is positive: 0 and -n name process groups, which signal 0 always finds, and
        // NaN is a garbled file. Our own pid: a restarted container's previous process had it.
        if (owner > 0 && owner !== process.pid && isRunning(owner)) {
          throw new AuditUnavailableError(
            `the audit log in ${dir} is in use by process ${owner} (a running arbiter serve?): stop it first, or archive through POST /api/v1/audit/archive`,
          );
        }
        await removeIfUnchanged(path, held);
      }
    } finally {
      await unlink(draft).catch(() => undefined);
    }
    throw new AuditUnavailableError(`cannot take the lock ${path}: another process keeps taking it`);
  }

  release(): Promise<void> {
    return unlink(this.path).catch(() => undefined);
  }
}
