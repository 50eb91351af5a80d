/** Binary searches over ascending number arrays. */

/** First index in [lo, hi) whose value is >= target (hi when none). */
export function lowerBound(values: readonly number[], target: number, lo = 0, hi = values.length): number {
  let low = lo;
  let high = hi;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** First index in [lo, hi) whose value is > target (hi when none). */
export function upperBound(values: readonly number[], target: number, lo = 0, hi = values.length): number {
  let low = lo;
  let high = hi;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! <= target) low = mid + 1;
    else high = mid;
  }
  return low;
}

export function containsSorted(values: readonly number[], target: number): boolean {
  // Past the end the read is undefined, which equals no number: no bounds check needed.
  return values[lowerBound(values, target)] === target;
}
