import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containsSorted, lowerBound, upperBound } from './sorted-search.js';

const ascending = fc.array(fc.integer({ min: -20, max: 20 })).map((values) => values.sort((a, b) => a - b));

describe('sorted search', () => {
  it.each([
    { values: [1, 3, 5], target: 0, found: false },
    { values: [1, 3, 5], target: 1, found: true },
    { values: [1, 3, 5], target: 4, found: false },
    { values: [1, 3, 5], target: 5, found: true },
    { values: [1, 3, 5], target: 6, found: false },
    { values: [], target: 0, found: false },
  ])('containsSorted($values, $target) is $found', ({ values, target, found }) => {
    expect(containsSorted(values, target)).toBe(found);
  });

  it('agree with a linear scan on any ascending array (property)', () => {
    fc.assert(
      fc.property(ascending, fc.integer({ min: -22, max: 22 }), (values, target) => {
        const below = values.filter((v) => v < target).length;
        const atMost = values.filter((v) => v <= target).length;
        expect(lowerBound(values, target)).toBe(below);
        expect(upperBound(values, target)).toBe(atMost);
        expect(containsSorted(values, target)).toBe(values.includes(target));
      }),
    );
  });

  it('search only within [lo, hi)', () => {
    const values = [1, 2, 2, 2, 3, 9];
    expect(lowerBound(values, 2, 2, 5)).toBe(2);
    expect(upperBound(values, 2, 0, 3)).toBe(3);
    expect(lowerBound(values, 9, 0, 4)).toBe(4);
    expect(upperBound(values, 0, 3, 6)).toBe(3);
  });
});
