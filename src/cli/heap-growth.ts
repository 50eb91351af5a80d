import { setFlagsFromString } from 'node:v8';

/** Heap growth between full collections, in percent of the live heap. */
export const HEAP_GROWTH_PERCENT = 30;

/**
 * Bounds how far V8 lets the heap grow past the live data before its next full
 * collection. By default it may double or quadruple it, and loading a large configuration
 * produces garbage several times the live index, so a service holding 180 MB of index sat
 * at 600-750 MB of RSS it never gave back under load. With 30 %: about 350 MB, at the cost
 * of more frequent (incremental) full collections. A soft bound, unlike
 * --max-old-space-size: the heap still grows with the configuration.
 */
export function boundHeapGrowth(percent: number = HEAP_GROWTH_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
