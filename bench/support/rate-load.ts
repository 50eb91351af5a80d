import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RateLoadOptions, RateLoadResult } from '../rate-load.js';
import { BENCH_OUT } from './processes.js';

const run = promisify(execFile);

/** Runs the constant-rate generator (bench/rate-load.ts) in its own process. */
export async function runAtRate(options: RateLoadOptions): Promise<RateLoadResult> {
  const { stdout } = await run(process.execPath, [join(BENCH_OUT, 'rate-load.js'), JSON.stringify(options)], {
    maxBuffer: 1 << 20,
    timeout: (options.durationSec + 30) * 1000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as RateLoadResult;
}
