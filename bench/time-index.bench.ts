import { TimeIndex } from '../src/audit/file/time-index.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

const ADDED = 20_000;
const RATIO_TARGET = 3;

/**
 * The file log's time index after clock skew: one entry older than all before it makes
 * every earlier entry an anomaly. Adds in order after that must stay as cheap as adds to an
 * index that never saw the skew (the baseline, same sizes, same run): merging each new
 * position into the anomaly list would make them linear in its length. (This target was a
 * timed unit test in src/audit/file/time-index.test.ts.)
 */
export async function timeIndexBench(report: Report, settings: BenchSettings): Promise<void> {
  const before = settings.quick ? 20_000 : 100_000;
  const runs = settings.quick ? 3 : 9;
  const skewed: number[] = [];
  const clean: number[] = [];
  for (let run = 0; run < runs; run++) {
    clean.push(timedAdds(filledIndex(before, false)));
    skewed.push(timedAdds(filledIndex(before, true)));
    await new Promise((resolve) => setImmediate(resolve)); // let the event loop breathe
  }
  const name = 'time index';
  const arbiter = percentile(skewed, 50);
  const baseline = percentile(clean, 50);
  report.add({
    benchmark: name,
    metric:
      `${ADDED.toLocaleString('en-US')} in-order adds after one skewed entry made ` +
      `${before.toLocaleString('en-US')} anomalies, p50 of ${runs} (baseline: the same adds without the skew)`,
    arbiter,
    baseline,
    unit: 'ms',
    higherIsBetter: false,
    target: { text: `within ${RATIO_TARGET}x of the baseline`, met: arbiter < RATIO_TARGET * baseline },
  });
}

/** An index of `size` ascending times, the last one older than all (`skew`) or not. */
function filledIndex(size: number, skew: boolean): TimeIndex {
  const index = new TimeIndex();
  for (let t = 1; t < size; t += 1) index.add(t);
  index.add(skew ? 0 : size);
  return index;
}

/** Times ADDED in-order adds and checks the index still finds exactly them. */
function timedAdds(index: TimeIndex): number {
  const first = index.size + 1;
  const started = performance.now();
  for (let i = 0; i < ADDED; i += 1) index.add(first + i);
  const ms = performance.now() - started;
  const bounds = { sinceMs: first };
  const { lo, hi } = index.candidates(bounds);
  const found = hi - lo - index.misses(lo, hi, bounds).length;
  if (found !== ADDED) throw new Error(`time index: ${found} entries since ${first}, not ${ADDED}`);
  return ms;
}
