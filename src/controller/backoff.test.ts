import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  const settings = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2, jitter: 0.5 };

  it('grows exponentially up to the maximum and starts over after reset', () => {
    const backoff = new Backoff(settings, () => 1);
    expect([1, 2, 3, 4, 5].map(() => backoff.nextDelayMs())).toEqual([100, 200, 400, 800, 1_000]);
    backoff.reset();
    expect(backoff.nextDelayMs()).toBe(100);
  });

  it('randomises the jittered share of each delay', () => {
    const low = new Backoff(settings, () => 0);
    expect(low.nextDelayMs()).toBe(50);
    const mid = new Backoff(settings, () => 0.5);
    expect(mid.nextDelayMs()).toBe(75);
  });
});
