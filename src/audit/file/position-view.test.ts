import { describe, expect, it } from 'vitest';
import { listView, rangeView, type PositionView } from './position-view.js';

function positionsOf(view: PositionView): number[] {
  return Array.from({ length: view.length }, (_, k) => view.at(k));
}

describe('position views', () => {
  it('a range view holds [lo, hi), and nothing when hi is not above lo', () => {
    expect(positionsOf(rangeView(3, 7))).toEqual([3, 4, 5, 6]);
    expect(rangeView(7, 3).length).toBe(0);
    expect([2, 3, 5, 7, 9].map((p) => rangeView(3, 7).countBelow(p))).toEqual([0, 0, 2, 4, 4]);
  });

  it('a list view holds the part of the list in [lo, hi), wherever in the list it starts', () => {
    const list = [1, 3, 5, 7, 9, 11];
    const view = listView(list, 4, 10);
    expect(view.length).toBe(3);
    expect(positionsOf(view)).toEqual([5, 7, 9]);
    expect([0, 5, 6, 9, 10, 20].map((p) => view.countBelow(p))).toEqual([0, 0, 1, 2, 3, 3]);
    expect(listView(list, 12, 20).length).toBe(0);
    expect(positionsOf(listView(list, 0, 4))).toEqual([1, 3]);
  });
});
