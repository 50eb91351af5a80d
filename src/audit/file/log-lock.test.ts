import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOCK_FILE, LogLock, removeIfUnchanged } from './log-lock.js';
import { runInChild, sourceUrl } from './test-child-process.js';
import { tempDir } from './test-fixtures.js';

let dir: string;
let lockPath: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  lockPath = join(dir, LOCK_FILE);
});
afterEach(() => cleanup());

/** What an operator reads when another process owns the log. */
function inUseBy(pid: number): { code: string; message: string } {
  return {
    code: 'UNAVAILABLE',
    message: `the audit log in ${dir} is in use by process ${pid} (a running arbiter serve?): stop it first, or archive through POST /api/v1/audit/archive`,
  };
}

/** The pid of a process that has exited (and been reaped). */
async function exitedPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

async function expectTakenOver(): Promise<void> {
  const lock = await LogLock.acquire(dir);
  expect(await readFile(lockPath, 'utf8')).toBe(`${process.pid}\n`);
  await lock.release();
  await expect(stat(lockPath)).rejects.toMatchObject({ code: 'ENOENT' });
}

describe('LogLock', () => {
  it('refuses the lock of a running process, naming it, and leaves its lock file alone', async () => {
    const sleeper = spawn('sleep', ['30']);
    try {
      await writeFile(lockPath, `${sleeper.pid}\n`);
      await expect(LogLock.acquire(dir)).rejects.toMatchObject(inUseBy(sleeper.pid!));
      expect(await readFile(lockPath, 'utf8')).toBe(`${sleeper.pid}\n`);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it.each<[string, () => Promise<string>]>([
    ['a process that has exited', async () => `${await exitedPid()}\n`],
    ['no pid (garbled)', () => Promise.resolve('not a pid\n')],
    ['nothing (a crash before the pid was written)', () => Promise.resolve('')],
    ['pid 0 (a process group: signal 0 to it always succeeds)', () => Promise.resolve('0\n')],
    ['a negative pid (a process group too)', () => Promise.resolve('-1\n')],
    [
      "this process's own pid (a restarted container's previous process)",
      () => Promise.resolve(`${process.pid}\n`),
    ],
  ])('takes over a lock file that holds %s', async (_, content) => {
    await writeFile(lockPath, await content());
    await expectTakenOver();
  });

  it('counts pid 1 as running whether or not this process may signal it', async () => {
    // As root the signal check succeeds; as any other user it fails with EPERM.
    await writeFile(lockPath, '1\n');
    await expect(LogLock.acquire(dir)).rejects.toMatchObject(inUseBy(1));
  });

  it.runIf(process.getuid?.() === 0)(
    'counts an owner as running when the signal check is refused (EPERM), as it is for a process that gave up root',
    async () => {
      await chmod(dir, 0o777);
      await writeFile(lockPath, '1\n');
      const outcome = await runInChild(`
        const { LogLock } = await import(${JSON.stringify(sourceUrl('log-lock.ts'))});
        process.setgid(65534);
        process.setuid(65534);
        let signal = 'allowed';
        try { process.kill(1, 0); } catch (err) { signal = err.code; }
        try {
          await LogLock.acquire(${JSON.stringify(dir)});
          console.log(JSON.stringify({ signal, acquired: true }));
        } catch (err) {
          console.log(JSON.stringify({ signal, code: err.code, message: err.message }));
        }
      `);
      expect(outcome).toEqual({ signal: 'EPERM', ...inUseBy(1) });
      expect(await readFile(lockPath, 'utf8')).toBe('1\n');
      // A refusal for another reason (ESRCH: no such process) is no owner. Asked in this
      // process too, since Stryker chooses the tests to run on a mutant by what they run here.
      await writeFile(lockPath, `${await exitedPid()}\n`);
      await expectTakenOver();
    },
  );

  it('fails with the cause when the lock file cannot be created (no such directory)', async () => {
    await expect(LogLock.acquire(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails closed, naming the cause, when the lock cannot be read (a directory in its place)', async () => {
    await mkdir(lockPath);
    await expect(LogLock.acquire(dir)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: `cannot read the lock ${lockPath}: EISDIR: illegal operation on a directory, read`,
    });
    expect((await stat(lockPath)).isDirectory()).toBe(true);
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
  });

  it('leaves nothing but the lock behind, whether it takes it or not', async () => {
    const lock = await LogLock.acquire(dir);
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    // Owner and group may read it, as they may read the log: no one else.
    expect((await stat(lockPath)).mode & 0o777).toBe(0o640 & ~process.umask());
    await expect(LogLock.acquire(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    await lock.release();
    await writeFile(lockPath, '1\n');
    await expect(LogLock.acquire(dir)).rejects.toMatchObject(inUseBy(1));
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
  });

  it('lets exactly one of two processes take over the same stale lock', async () => {
    await writeFile(lockPath, `${await exitedPid()}\n`);
    // Both are released at once by a file they wait for, so both read the stale pid, and
    // each keeps what it got until both have tried.
    const marker = (name: string) => JSON.stringify(join(dir, name));
    const racer = (n: number) => `
      const { existsSync, writeFileSync } = await import('node:fs');
      const { LogLock } = await import(${JSON.stringify(sourceUrl('log-lock.ts'))});
      const until = async (names) => {
        while (!names.every((name) => existsSync(name))) await new Promise((resolve) => setTimeout(resolve, 1));
      };
      writeFileSync(${marker(`ready-${n}`)}, '');
      await until([${marker('go')}]);
      const outcome = await LogLock.acquire(${JSON.stringify(dir)}).then(
        () => ({ took: true }),
        (err) => ({ took: false, code: err.code }),
      );
      writeFileSync(${marker(`tried-${n}`)}, '');
      await until([${marker('tried-0')}, ${marker('tried-1')}]);
      console.log(JSON.stringify(outcome));
    `;
    const outcomes = Promise.all([runInChild(racer(0)), runInChild(racer(1))]);
    await vi.waitFor(
      async () => expect(await readdir(dir)).toEqual(expect.arrayContaining(['ready-0', 'ready-1'])),
      { timeout: 60_000, interval: 20 }, // bounds a hang: two node processes starting
    );
    await writeFile(join(dir, 'go'), '');
    expect(await outcomes).toEqual(
      expect.arrayContaining([{ took: true }, { took: false, code: 'UNAVAILABLE' }]),
    );
  });

  it('gives up after a second try when the lock changes under it every time', async () => {
    // /proc/self/io changes with every read this process makes: a lock that reads
    // differently each time it is looked at, as if other processes kept taking it.
    await symlink('/proc/self/io', lockPath);
    await expect(LogLock.acquire(dir)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: `cannot take the lock ${lockPath}: another process keeps taking it`,
    });
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
  });

  it('removes a stale lock only if it still holds what its owner was judged gone by', async () => {
    const dead = `${await exitedPid()}\n`;
    // Another process took the lock since this one read the dead pid: it stays.
    await writeFile(lockPath, '1\n');
    await removeIfUnchanged(lockPath, dead);
    expect(await readFile(lockPath, 'utf8')).toBe('1\n');
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    // Unchanged: removed, and nothing is left aside.
    await writeFile(lockPath, dead);
    await removeIfUnchanged(lockPath, dead);
    expect(await readdir(dir)).toEqual([]);
    // Gone already (another process removed it first): nothing to do.
    await expect(removeIfUnchanged(lockPath, dead)).resolves.toBeUndefined();
    // A vanished lock was judged as no text at all.
    await symlink(join(dir, 'nowhere'), lockPath);
    await removeIfUnchanged(lockPath, undefined);
    expect(await readdir(dir)).toEqual([]);
  });

  it('release is harmless when the lock file is already gone', async () => {
    const lock = await LogLock.acquire(dir);
    await lock.release();
    await expect(lock.release()).resolves.toBeUndefined();
  });
});
