import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withinTimeBounds, type TimeBounds } from '../query-match.js';
import { TimeIndex } from './time-index.js';

/** The positions the index says match, computed the way EntryIndex does. */
function indexed(index: TimeIndex, bounds: TimeBounds): { positions: number[]; count: number } {
  const { lo, hi } = index.candidates(bounds);
  const positions: number[] = [];
  for (let p = lo; p < hi; p += 1) if (index.matches(p, bounds)) positions.push(p);
  return { positions, count: hi - lo - index.misses(lo, hi, bounds).length };
}

describe('TimeIndex', () => {
  it('agrees with a full scan for any sequence of times, in order or not (property)', () => {
    const time = fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(Number.NaN));
    const bound = fc.option(fc.integer({ min: -5, max: 65 }), { nil: undefined });
    fc.assert(
      fc.property(fc.array(time, { maxLength: 80 }), bound, bound, (times, sinceMs, untilMs) => {
        const index = new TimeIndex();
        times.forEach((t) => index.add(t));
        const bounds: TimeBounds = {
          ...(sinceMs === undefined ? {} : { sinceMs }),
          ...(untilMs === undefined ? {} : { untilMs }),
        };
        const scan = times.flatMap((t, p) => (withinTimeBounds(t, bounds) ? [p] : []));
        const got = indexed(index, bounds);
        expect(got.positions).toEqual(scan);
        expect(got.count).toBe(scan.length);
      }),
      { numRuns: 500 },
    );
  });

  it('has no anomalies to check while times ascend', () => {
    const index = new TimeIndex();
    for (let t = 0; t < 1000; t += 1) index.add(t);
    expect(index.candidates({ sinceMs: 100, untilMs: 199 })).toEqual({ lo: 100, hi: 200 });
    expect(index.misses(0, 1000, { sinceMs: 100, untilMs: 199 })).toEqual([]);
  });

  it('has no anomalies to check when entries share a millisecond', () => {
    const index = new TimeIndex();
    for (const t of [5, 5, 5, 7, 7, 9]) index.add(t);
    // Every entry is outside these bounds, yet none needs its own time checked.
    expect(index.misses(0, 6, { sinceMs: 10 })).toEqual([]);
    expect(index.misses(0, 6, { untilMs: 4 })).toEqual([]);
    expect(indexed(index, { sinceMs: 7, untilMs: 7 })).toEqual({ positions: [3, 4], count: 2 });
  });
});
