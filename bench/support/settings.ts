/** Sizes and durations of one run: full by default, small with --quick (smoke test of the harness). */
export interface BenchSettings {
  quick: boolean;
  /** Seconds of each measured wrk run. */
  loadSec: number;
  warmupSec: number;
  connections: number;
  appendWriters: number;
  appendSec: number;
  verifyEntries: number;
  scale: { grants: number; capabilities: number; policies: number; grantsPerActor: number };
  queryEntries: number;
}

export function benchSettings(quick: boolean): BenchSettings {
  return quick
    ? {
        quick,
        loadSec: 3,
        warmupSec: 1,
        connections: 16,
        appendWriters: 2,
        appendSec: 3,
        verifyEntries: 5_000,
        scale: { grants: 2_000, capabilities: 200, policies: 200, grantsPerActor: 100 },
        queryEntries: 20_000,
      }
    : {
        quick,
        loadSec: 10,
        warmupSec: 3,
        connections: 32,
        appendWriters: 4,
        appendSec: 10,
        verifyEntries: 100_000,
        scale: { grants: 100_000, capabilities: 10_000, policies: 10_000, grantsPerActor: 100 },
        queryEntries: 1_000_000,
      };
}
