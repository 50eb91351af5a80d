import { withinTimeBounds, type TimeBounds } from '../query-match.js';
import { lowerBound, upperBound } from './sorted-search.js';

/**
 * Time-range lookup over entries in log order, correct even when a caller's timestamp is
 * older than its predecessor's (clock skew between callers).
 *
 * prefixMax[i] (max time of entries 0..i) and suffixMin[i] (min time of entries i..n-1)
 * are both non-decreasing, so binary search gives [lo, hi) outside of which no entry can
 * match. Inside, an entry whose time equals both prefixMax and suffixMin matches exactly
 * when it lies in [lo, hi); only the others ("anomalies", entries involved in an
 * inversion, rare in practice) need their own time checked. Counting a range therefore
 * costs O(log n + anomalies), not O(range).
 */
export class TimeIndex {
  private readonly times: number[] = [];
  private readonly prefixMax: number[] = [];
  private readonly suffixMin: number[] = [];
  /** Ascending positions whose time may differ from prefixMax or suffixMin. */
  private readonly anomalies: number[] = [];
  private readonly anomalous = new Set<number>();

  get size(): number {
    return this.times.length;
  }

  timeAt(position: number): number {
    return this.times[position]!;
  }

  /** Adds the next entry's time (NaN for an unparsable timestamp, which matches no range). */
  add(timeMs: number): void {
    const position = this.times.length;
    const previousMax = position === 0 ? Number.NEGATIVE_INFINITY : this.prefixMax[position - 1]!;
    const valid = !Number.isNaN(timeMs);
    this.times.push(timeMs);
    this.prefixMax.push(valid ? Math.max(previousMax, timeMs) : previousMax);
    this.suffixMin.push(valid ? timeMs : Number.POSITIVE_INFINITY);
    const lowered = valid ? this.lowerSuffix(position, timeMs) : [];
    const newest = !valid || timeMs < previousMax ? [position] : [];
    this.markAnomalies([...lowered, ...newest]);
  }

  /** Positions [lo, hi) that can hold a match; outside of it nothing matches. */
  candidates(bounds: TimeBounds): { lo: number; hi: number } {
    const lo = bounds.sinceMs === undefined ? 0 : lowerBound(this.prefixMax, bounds.sinceMs);
    const hi = bounds.untilMs === undefined ? this.size : upperBound(this.suffixMin, bounds.untilMs);
    return { lo, hi: Math.max(lo, hi) };
  }

  /**
   * Whether the entry at position matches the bounds. Its own time is checked: inside
   * candidates(bounds) only an anomaly can miss, but skipping the others' two comparisons
   * for a set lookup saves nothing.
   */
  matches(position: number, bounds: TimeBounds): boolean {
    return withinTimeBounds(this.times[position]!, bounds);
  }

  /** Anomalous positions in [lo, hi) that do not match: the only non-matches of the range. */
  misses(lo: number, hi: number, bounds: TimeBounds): number[] {
    const from = lowerBound(this.anomalies, lo);
    const to = lowerBound(this.anomalies, hi);
    return this.anomalies.slice(from, to).filter((p) => !withinTimeBounds(this.times[p]!, bounds));
  }

  /** Lowers suffixMin behind a new, older time; returns the positions whose minimum changed. */
  private lowerSuffix(position: number, timeMs: number): number[] {
    const changed: number[] = [];
    for (let j = position - 1; j >= 0 && this.suffixMin[j]! > timeMs; j -= 1) {
      this.suffixMin[j] = timeMs;
      changed.push(j);
    }
    return changed.reverse();
  }

  /** Merges ascending-or-not new positions into the sorted anomaly list. */
  private markAnomalies(positions: number[]): void {
    const fresh = positions.filter((p) => !this.anomalous.has(p));
    if (fresh.length === 0) return;
    fresh.forEach((p) => this.anomalous.add(p));
    const from = lowerBound(this.anomalies, fresh[0]!);
    const merged = [...this.anomalies.splice(from), ...fresh].sort((a, b) => a - b);
    // A loop, not push(...merged): spreading a huge array overflows the call stack.
    for (const p of merged) this.anomalies.push(p);
  }
}
