import { afterEach, describe, expect, it, vi } from 'vitest';
import { ArbiterError } from '../model/index.js';
import { ReviewCache, type ReviewCacheSettings } from './review-cache.js';

const SETTINGS: ReviewCacheSettings = {
  positiveTtlMs: 10_000,
  negativeTtlMs: 2_000,
  maxEntries: 100,
  maxInFlight: 8,
  reviewTimeoutMs: 1_000,
};
const MESSAGES = { failure: 'cannot check: Review', busy: 'too many reviews; retry' };

/** A cache of yes/no answers and a fake API server that counts what it was asked. */
function setup(settings: Partial<ReviewCacheSettings> = {}) {
  const clock = { ms: 0 };
  const asked: string[] = [];
  const answers = new Map<string, boolean>();
  let failure: Error | undefined;
  let held: Promise<void> | undefined;
  let release: () => void = () => undefined;
  const cache = new ReviewCache<boolean>(
    { ...SETTINGS, ...settings },
    MESSAGES,
    (yes) => yes,
    () => clock.ms,
  );
  const ask = (key: string) =>
    cache.get(key, async () => {
      asked.push(key);
      await held;
      if (failure) throw failure;
      return answers.get(key) ?? false;
    });
  return {
    clock,
    asked,
    answers,
    cache,
    ask,
    fail: (err: Error | undefined) => (failure = err),
    hold: () => {
      held = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

describe('ReviewCache', () => {
  it('keeps a positive answer for positiveTtlMs and a negative one for negativeTtlMs, not a millisecond longer', async () => {
    const { ask, asked, answers, clock } = setup();
    answers.set('yes', true);
    expect(await ask('yes')).toBe(true);
    expect(await ask('no')).toBe(false);
    clock.ms = 1_999;
    await ask('yes');
    await ask('no');
    expect(asked).toEqual(['yes', 'no']);
    clock.ms = 2_000;
    await ask('no');
    clock.ms = 9_999;
    await ask('yes');
    expect(asked).toEqual(['yes', 'no', 'no']);
    clock.ms = 10_000;
    await ask('yes');
    expect(asked).toEqual(['yes', 'no', 'no', 'yes']);
  });

  it('answers anew once an answer expired: a changed answer is seen', async () => {
    const { ask, answers, clock } = setup();
    expect(await ask('k')).toBe(false);
    answers.set('k', true);
    expect(await ask('k')).toBe(false); // still cached
    clock.ms = 2_000;
    expect(await ask('k')).toBe(true);
  });

  it('keeps at most maxEntries answers, dropping the oldest first', async () => {
    const { ask, asked, cache } = setup({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c', 'd']) await ask(key);
    expect(cache.size).toBe(3);
    await ask('d');
    await ask('b');
    expect(asked).toEqual(['a', 'b', 'c', 'd']);
    await ask('a');
    expect(asked).toEqual(['a', 'b', 'c', 'd', 'a']);
    expect(cache.size).toBe(3);
  });

  it('a renewed answer counts as the newest', async () => {
    const { ask, asked, clock } = setup({ maxEntries: 2 });
    await ask('a');
    await ask('b');
    clock.ms = 2_000; // both expired
    await ask('a'); // renewed: b is now the oldest
    await ask('c');
    await ask('a');
    expect(asked).toEqual(['a', 'b', 'a', 'c']);
  });

  it('shares one review among concurrent asks for one key', async () => {
    const { ask, asked, hold, release, answers } = setup();
    answers.set('k', true);
    hold();
    const pending = Array.from({ length: 5 }, () => ask('k'));
    release();
    expect(await Promise.all(pending)).toEqual([true, true, true, true, true]);
    expect(asked).toEqual(['k']);
  });

  it('fails closed with UNAVAILABLE and the cause, caches no failure, and drops the expired answer', async () => {
    const { ask, fail, cache, clock, answers } = setup();
    answers.set('k', true);
    await ask('k');
    clock.ms = 10_000;
    const refused = new Error('connect ECONNREFUSED');
    fail(refused);
    const failed = ask('k');
    await expect(failed).rejects.toBeInstanceOf(ArbiterError);
    await expect(failed).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'cannot check: Review failed',
      cause: refused,
    });
    expect(cache.size).toBe(0);
    fail(undefined);
    expect(await ask('k')).toBe(true);
  });

  it('passes an UNAVAILABLE of the review on as it is, and wraps any other ArbiterError', async () => {
    const { ask, fail } = setup();
    const unavailable = new ArbiterError('UNAVAILABLE', 'the reviewer is busy');
    fail(unavailable);
    await expect(ask('k')).rejects.toBe(unavailable);
    const forbidden = new ArbiterError('FORBIDDEN', 'no');
    fail(forbidden);
    await expect(ask('k')).rejects.toMatchObject({ code: 'UNAVAILABLE', cause: forbidden });
  });

  it('answers UNAVAILABLE when a review is too slow or maxInFlight are under way', async () => {
    const { ask, hold, release } = setup({ reviewTimeoutMs: 20, maxInFlight: 2 });
    hold(); // answered only after the cache has given up
    const slow = [ask('a'), ask('b')];
    await expect(ask('c')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'too many reviews; retry' });
    // A key already under way joins it instead of counting again.
    const joined = ask('a');
    const outcomes = await Promise.allSettled([...slow, joined]);
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({
        status: 'rejected',
        reason: { code: 'UNAVAILABLE', message: 'cannot check: Review took more than 20 ms' },
      });
    release();
  });

  describe('with fake timers', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('leaves no timer behind once a review is answered or failed', async () => {
      vi.useFakeTimers();
      const { ask, fail } = setup();
      await ask('a');
      fail(new Error('HTTP 500'));
      await expect(ask('b')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
