import { readFile, readlink, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLogFile } from './log-file.js';
import { runInChild, sourceUrl } from './test-child-process.js';
import { tempDir } from './test-fixtures.js';

let dir: string;
let path: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, 'audit.jsonl');
});
afterEach(() => cleanup());

/** What this process's open descriptors point at. */
async function openTargets(): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((target) => target !== '');
}

describe('openLogFile', () => {
  it('writes at the position asked and reads back from any position, fewer bytes at the end', async () => {
    const file = await openLogFile(path);
    await file.write(Buffer.from('hello world'), 0);
    await file.write(Buffer.from('WORLD!'), 6);
    expect(await file.size()).toBe(12);
    expect((await file.read(5, 6)).toString()).toBe('WORLD');
    expect((await file.read(100, 6)).toString()).toBe('WORLD!');
    expect(await file.read(4, 12)).toHaveLength(0);
    await file.close();
    expect(await readFile(path, 'utf8')).toBe('hello WORLD!');
  });

  it('leaves no descriptor of the directory open after creating the file (and syncing the directory)', async () => {
    const file = await openLogFile(path);
    await file.close();
    expect(await openTargets()).not.toContain(dir);
  });

  it('writes the rest of a write cut short at its place: a file-size limit fails the rest with EFBIG', async () => {
    // The first 1000 bytes, in this process; then 4000 more in a process limited to files
    // of 1 or 2 KiB (the shell's `ulimit -f` block): the kernel writes up to the limit, and
    // the rest, written again from where the first write stopped, fails.
    const head = Buffer.alloc(1000, 'h');
    const file = await openLogFile(path);
    await file.write(head, 0);
    await file.close();
    const outcome = await runInChild(
      `
      const { openLogFile } = await import(${JSON.stringify(sourceUrl('log-file.ts'))});
      const file = await openLogFile(${JSON.stringify(path)});
      const data = Buffer.alloc(4000);
      for (let i = 0; i < data.length; i += 1) data[i] = i % 251;
      let code = null;
      try { await file.write(data, 1000); } catch (err) { code = err.code; }
      await file.close();
      console.log(JSON.stringify({ code }));
    `,
      { fileSizeBlocks: 2 },
    );
    expect(outcome).toEqual({ code: 'EFBIG' });
    const stored = await readFile(path);
    expect([1024, 2048]).toContain(stored.length);
    expect(stored.subarray(0, 1000).equals(head)).toBe(true);
    const tail = stored.subarray(1000);
    expect([...tail]).toEqual(Array.from({ length: tail.length }, (_, i) => i % 251));
  });
});
