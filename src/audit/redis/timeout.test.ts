import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditUnavailableError } from '../../model/index.js';
import { AuditAppendInDoubtError } from './errors.js';
import { RedisTimeoutError, sleep, withTimeout } from './timeout.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('withTimeout', () => {
  it('answers with the call when it answers in time, and leaves no timer behind', async () => {
    const answer = withTimeout(
      sleep(50).then(() => 'reply'),
      100,
      'audit append script',
    );
    await vi.advanceTimersByTimeAsync(50);
    await expect(answer).resolves.toBe('reply');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('passes on the call failing in time, and leaves no timer behind', async () => {
    const cause = new Error('NOSCRIPT');
    const answer = withTimeout(Promise.reject(cause), 100, 'audit append script');
    await expect(answer).rejects.toBe(cause);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fails with a RedisTimeoutError naming the call and the time once the time is up, not before', async () => {
    let settled = false;
    const answer = withTimeout(new Promise(() => undefined), 100, 'audit append probe');
    answer.catch(() => undefined).finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(99);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await answer.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisTimeoutError);
    expect(err).toMatchObject({
      name: 'RedisTimeoutError',
      message: 'audit append probe did not answer within 100 ms',
    });
  });

  it('treats a deadline already past as 0 ms', async () => {
    const answer = withTimeout(new Promise(() => undefined), -20, 'audit append script');
    const outcome = answer.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    expect(await outcome).toMatchObject({ message: 'audit append script did not answer within 0 ms' });
  });

  it('leaves no unhandled rejection when the call fails after the time is up', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const late = sleep(200).then(() => Promise.reject(new Error('late failure')));
      const answer = withTimeout(late, 100, 'audit append script');
      const outcome = answer.catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(300);
      expect(await outcome).toBeInstanceOf(RedisTimeoutError);
      vi.useRealTimers();
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('AuditAppendInDoubtError', () => {
  it('is an unavailable error (the caller fails closed) with its own name and the cause kept', () => {
    const cause = new Error('WAIT timed out');
    const err = new AuditAppendInDoubtError('the append may be in the chain', { cause });
    expect(err).toBeInstanceOf(AuditUnavailableError);
    expect(err).toMatchObject({
      name: 'AuditAppendInDoubtError',
      message: 'the append may be in the chain',
      cause,
    });
  });
});
