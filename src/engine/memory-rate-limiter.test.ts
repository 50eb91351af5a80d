import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryRateLimiter } from './memory-rate-limiter.js';

const limit = { key: 'k', maxRequests: 3, windowSeconds: 10 };

describe('MemoryRateLimiter', () => {
  it('admits up to maxRequests in a window and reports what remains', () => {
    const limiter = new MemoryRateLimiter();
    expect([0, 1, 2, 3].map((s) => limiter.admit(limit, s * 1000))).toEqual([
      { admitted: true, remaining: 2 },
      { admitted: true, remaining: 1 },
      { admitted: true, remaining: 0 },
      { admitted: false, remaining: 0 },
    ]);
  });

  it('peeks at what admit would answer without counting (dry runs)', () => {
    const limiter = new MemoryRateLimiter();
    expect(limiter.peek(limit, 0)).toEqual({ admitted: true, remaining: 2 });
    for (let i = 0; i < 5; i++) limiter.peek(limit, 0);
    expect(limiter.admit(limit, 0)).toEqual({ admitted: true, remaining: 2 });
    limiter.admit(limit, 1000);
    limiter.admit(limit, 2000);
    expect(limiter.peek(limit, 9999)).toEqual({ admitted: false, remaining: 0 });
    // The t=0 admission leaves the window at 10 s, for peek as for admit.
    expect(limiter.peek(limit, 10_000)).toEqual({ admitted: true, remaining: 0 });
    expect(limiter.admit(limit, 10_000).admitted).toBe(true);
  });

  it('slides: each admission frees its slot exactly windowSeconds later', () => {
    const limiter = new MemoryRateLimiter();
    for (const t of [0, 4000, 8000]) limiter.admit(limit, t);
    expect(limiter.admit(limit, 9999).admitted).toBe(false);
    expect(limiter.admit(limit, 10_000).admitted).toBe(true); // the t=0 request left the window
    expect(limiter.admit(limit, 13_999).admitted).toBe(false);
    expect(limiter.admit(limit, 14_000).admitted).toBe(true);
  });

  it('does not count rejected requests', () => {
    const limiter = new MemoryRateLimiter();
    const one = { ...limit, maxRequests: 1 };
    limiter.admit(one, 0);
    for (let t = 1; t < 10_000; t += 500) expect(limiter.admit(one, t).admitted).toBe(false);
    expect(limiter.admit(one, 10_000).admitted).toBe(true);
  });

  it('keeps separate counters per key', () => {
    const limiter = new MemoryRateLimiter();
    const one = { ...limit, maxRequests: 1 };
    expect(limiter.admit(one, 0).admitted).toBe(true);
    expect(limiter.admit({ ...one, key: 'other' }, 0).admitted).toBe(true);
  });

  it('prunes keys whose window has passed', () => {
    const limiter = new MemoryRateLimiter({ sweepIntervalMs: 1000 });
    for (let i = 0; i < 100; i++) limiter.admit({ ...limit, key: `k${i}` }, 0);
    expect(limiter.size).toBe(100);
    limiter.admit({ ...limit, key: 'fresh' }, 60_000);
    expect(limiter.size).toBe(1);
  });

  it('never admits more than maxRequests within any window (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 80 }),
        (maxRequests, windowSeconds, gaps) => {
          const limiter = new MemoryRateLimiter({ sweepIntervalMs: 500 });
          const request = { key: 'k', maxRequests, windowSeconds };
          let now = 0;
          const admitted: number[] = [];
          for (const gap of gaps) {
            now += gap;
            if (limiter.admit(request, now).admitted) admitted.push(now);
          }
          const windowMs = windowSeconds * 1000;
          return admitted.every(
            (t) => admitted.filter((u) => u > t - windowMs && u <= t).length <= maxRequests,
          );
        },
      ),
    );
  });
});

describe('MemoryRateLimiter memory', () => {
  const oneSecond = (key: string) => ({ key, maxRequests: 10, windowSeconds: 1 });

  it('sweeps keys whose window has passed at most once per sweep interval', () => {
    const limiter = new MemoryRateLimiter({ sweepIntervalMs: 60_000 });
    limiter.admit(oneSecond('a'), 0); // the first admission sweeps (nothing yet)
    limiter.admit(oneSecond('b'), 2_000); // a has expired, but the interval has not passed
    expect(limiter.size).toBe(2);
    limiter.admit(oneSecond('c'), 30_000);
    expect(limiter.size).toBe(3);
    limiter.admit(oneSecond('d'), 60_000); // exactly one interval after the first sweep
    expect(limiter.size).toBe(1);
  });

  it('sweeps a key whose newest admission is exactly one window old', () => {
    const limiter = new MemoryRateLimiter({ sweepIntervalMs: 1_000 });
    limiter.admit(oneSecond('a'), 0);
    limiter.admit(oneSecond('b'), 1_000);
    expect(limiter.size).toBe(1);
  });

  it('keeps memory bounded by the admissions in the window, compacting expired ones', () => {
    const limiter = new MemoryRateLimiter();
    const limit = { key: 'k', maxRequests: 1_000, windowSeconds: 1 };
    let peak = 0;
    for (let t = 0; t < 20_000; t += 10) {
      expect(limiter.admit(limit, t).admitted).toBe(true);
      peak = Math.max(peak, limiter.heldTimes);
    }
    // 100 live admissions per window; expired ones are dropped once they are half the log.
    expect(peak).toBeGreaterThanOrEqual(100);
    expect(peak).toBeLessThanOrEqual(2 * 100 + 2);
  });
});

describe('MemoryRateLimiter, several limits at once', () => {
  const grantLimit = { key: 'bot|db.query', maxRequests: 5, windowSeconds: 10 };
  const budget = { key: 'namespace:team-a', maxRequests: 2, windowSeconds: 10 };

  it('admits only when every limit admits, and a refusal by one spends none of the others', () => {
    const limiter = new MemoryRateLimiter();
    expect(limiter.admitAll([grantLimit, budget], 0)).toEqual({ admitted: true, remaining: [4, 1] });
    expect(limiter.admitAll([grantLimit, budget], 1)).toEqual({ admitted: true, remaining: [3, 0] });
    expect(limiter.admitAll([grantLimit, budget], 2)).toEqual({
      admitted: false,
      remaining: [3, 0],
      refusedBy: 1,
    });
    // The refused request did not spend the grant's limit.
    expect(limiter.peek(grantLimit, 3)).toEqual({ admitted: true, remaining: 2 });
    const full = { ...grantLimit, key: 'full', maxRequests: 1 };
    limiter.admit(full, 0);
    expect(limiter.admitAll([full, { ...budget, key: 'fresh' }], 4)).toMatchObject({
      admitted: false,
      refusedBy: 0,
    });
    expect(limiter.peek({ ...budget, key: 'fresh' }, 5)).toEqual({ admitted: true, remaining: 1 });
  });

  it('peeks at several limits without counting, and admits an empty list', () => {
    const limiter = new MemoryRateLimiter();
    for (let i = 0; i < 4; i++)
      expect(limiter.peekAll([grantLimit, budget], 0)).toEqual({ admitted: true, remaining: [4, 1] });
    expect(limiter.admitAll([], 0)).toEqual({ admitted: true, remaining: [] });
  });
});
