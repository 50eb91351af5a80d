import { describe, expect, it } from 'vitest';
import { includesVersion, VersionWaiters } from './version-waiters.js';

describe('includesVersion', () => {
  it('compares etcd revisions numerically and anything else for equality', () => {
    expect(includesVersion('10', '9')).toBe(true);
    expect(includesVersion('9', '10')).toBe(false);
    expect(includesVersion('10', '10')).toBe(true);
    expect(includesVersion('abc', 'abc')).toBe(true);
    expect(includesVersion('abd', 'abc')).toBe(false);
    expect(includesVersion(undefined, '1')).toBe(false);
  });
});

describe('VersionWaiters', () => {
  it('resolves when the version or a later one is processed, and when an object is gone', async () => {
    const waiters = new VersionWaiters(1_000);
    const written = waiters.untilVersion('Policy/p', '12');
    const gone = waiters.untilGone('Policy/q');
    waiters.processed(new Map([['Policy/q', '3']]));
    waiters.processed(new Map([['Policy/p', '14']]));
    await expect(written).resolves.toBeUndefined();
    await expect(gone).resolves.toBeUndefined();
  });

  it('rejects with UNAVAILABLE when the version does not arrive in time', async () => {
    const waiters = new VersionWaiters(20);
    await expect(waiters.untilVersion('Policy/p', '5')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
