import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** Heap growth between full collections, in percent of the live heap, for large heaps. */
export const HEAP_GROWTH_PERCENT = 30;
/** Below this much heap in use once started, V8's own growth policy is kept. */
export const LARGE_HEAP_BYTES = 128 * 1024 * 1024;

/**
 * Bounds how far V8 lets the heap grow past the live data before its next full
 * collection. By default it may double or quadruple it, and loading a large configuration
 * produces garbage several times the live index, so a service holding 180 MB of index sat
 * at 600-750 MB of RSS it never gave back under load. With 30 %: about 330 MB. A soft
 * bound, unlike --max-old-space-size: the heap still grows with the configuration.
 * Call before the configuration loads.
 */
export function boundHeapGrowth(percent: number = HEAP_GROWTH_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Once started, a small heap goes back to V8's own policy: 30 % of a 50 MB heap meant a
 * full collection every half second under load, and a p99 half again as long.
 */
export function relaxHeapGrowthIfSmall(): boolean {
  if (getHeapStatistics().used_heap_size >= LARGE_HEAP_BYTES) return false;
  setFlagsFromString('--heap-growing-percent=0'); // 0: V8 chooses, as by default
  return true;
}
