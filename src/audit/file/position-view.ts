import { lowerBound } from './sorted-search.js';

/** An ascending run of log positions: a contiguous range or a slice of an index list. */
export interface PositionView {
  readonly length: number;
  at(k: number): number;
  /** Number of positions in the view that are < position. */
  countBelow(position: number): number;
}

export function rangeView(lo: number, hi: number): PositionView {
  const length = Math.max(0, hi - lo);
  return {
    length,
    at: (k) => lo + k,
    countBelow: (position) => Math.min(length, Math.max(0, position - lo)),
  };
}

/** The part of an ascending list that lies in positions [lo, hi). */
export function listView(list: readonly number[], lo: number, hi: number): PositionView {
  const from = lowerBound(list, lo);
  const to = lowerBound(list, hi, from);
  return {
    length: to - from,
    at: (k) => list[from + k]!,
    countBelow: (position) => lowerBound(list, position, from, to) - from,
  };
}
