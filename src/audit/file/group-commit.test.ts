import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

describe('GroupCommit', () => {
  it('holds items submitted during exclusive work until it ends, then flushes them together', async () => {
    const batches: number[][] = [];
    const commits = new GroupCommit<number, number>((batch) => {
      batches.push([...batch]);
      return Promise.resolve(batch.map((item) => item * 10));
    }, 10);
    let submitted: Promise<number>[] = [];
    const result = await commits.exclusive(async () => {
      submitted = [commits.submit(1), commits.submit(2)];
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(batches).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await Promise.all(submitted)).toEqual([10, 20]);
    expect(batches).toEqual([[1, 2]]);
  });
});
