import { describe, expect, it } from 'vitest';
import { KeyRateLimiter } from './key-rate-limiter.js';

/** A wall-clock time, as Date.now() gives: the bucket must measure from its own last use. */
const T0 = 1_700_000_000_000;

describe('per-key rate limit', () => {
  it('allows the burst, refuses the next, refills over time', () => {
    const limiter = new KeyRateLimiter(2, 3);
    const at = (ms: number) => limiter.take('k', ms);
    expect([at(0), at(0), at(0)].every((s) => s.allowed)).toBe(true);
    const refused = at(0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(at(600).allowed).toBe(true);
    expect(limiter.take('other', 0).allowed).toBe(true);
  });

  it('refills gradually: 2 per second is one request per 500 ms, not a full bucket at once', () => {
    const limiter = new KeyRateLimiter(2, 3);
    const at = (ms: number) => limiter.take('k', T0 + ms);
    for (let i = 0; i < 3; i++) expect(at(0).allowed).toBe(true);
    expect(at(0).allowed).toBe(false);
    expect(at(400).allowed).toBe(false);
    expect(at(500)).toMatchObject({ allowed: true, remaining: 0 });
    expect(at(500).allowed).toBe(false);
  });

  it('tells how many requests remain and in how many seconds the bucket is full again', () => {
    const limiter = new KeyRateLimiter(2, 3);
    const take = () => limiter.take('k', T0);
    expect(take()).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1, retryAfterSeconds: 0 });
    expect(take()).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 1, retryAfterSeconds: 0 });
    // 3 tokens missing at 2 per second: full in 1.5 s, rounded up.
    expect(take()).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 2, retryAfterSeconds: 0 });
  });

  it('tells a refused client how long until its next request can pass', () => {
    const limiter = new KeyRateLimiter(0.5, 1); // one request per 2 s
    expect(limiter.take('k', T0).allowed).toBe(true);
    expect(limiter.take('k', T0)).toEqual({
      allowed: false,
      limit: 1,
      remaining: 0,
      resetSeconds: 2,
      retryAfterSeconds: 2,
    });
    // Half the wait is over: only the rest is asked for.
    expect(limiter.take('k', T0 + 1_000)).toMatchObject({
      allowed: false,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
    expect(limiter.take('k', T0 + 2_000).allowed).toBe(true);
  });
});
