import { writeFileSync } from 'node:fs';
import { getHeapStatistics, GCProfiler } from 'node:v8';

/**
 * Preloaded into a server under test (`node --import alloc-probe.js`): the first SIGUSR2
 * starts counting the bytes the process allocates on the JavaScript heap, the second writes
 * the count to $ARBITER_BENCH_ALLOC_FILE. V8 has no allocation counter, but every byte
 * allocated is either still in use or was reclaimed by a collection, so the sum over the
 * collections of (used before it - used after the one before), plus the growth since the
 * last one, is what was allocated in between.
 */
export interface AllocationCount {
  allocatedBytes: number;
  collections: number;
  /** Time spent in garbage collection, from the profiler's per-collection cost. */
  gcMs: number;
}

const out = process.env.ARBITER_BENCH_ALLOC_FILE;
let profiler: GCProfiler | undefined;
let usedAtStart = 0;

if (out) {
  process.on('SIGUSR2', () => {
    if (!profiler) {
      profiler = new GCProfiler();
      profiler.start();
      usedAtStart = getHeapStatistics().used_heap_size;
      return;
    }
    const result = profiler.stop();
    profiler = undefined;
    writeFileSync(out, JSON.stringify(countOf(result?.statistics ?? [], usedAtStart)));
  });
}

interface GcStatistic {
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

function countOf(statistics: readonly GcStatistic[], usedBefore: number): AllocationCount {
  let allocated = 0;
  let used = usedBefore;
  let costUs = 0;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - used;
    used = gc.afterGC.heapStatistics.usedHeapSize;
    costUs += gc.cost;
  }
  allocated += getHeapStatistics().used_heap_size - used;
  return { allocatedBytes: allocated, collections: statistics.length, gcMs: costUs / 1000 };
}
