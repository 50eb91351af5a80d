import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AllocationCount } from './alloc-probe.js';
import { BENCH_OUT, tempDir, type ServerProcess } from './processes.js';

/** What a server needs to be started with so that its allocations can be counted. */
export interface AllocationProbe {
  nodeArgs: string[];
  env: Record<string, string>;
  /** Counts what the server allocates while `work` runs. */
  during(server: ServerProcess, work: () => Promise<void>): Promise<AllocationCount>;
}

/** Preloads bench/support/alloc-probe.ts into a server; SIGUSR2 starts and ends a count. */
export async function allocationProbe(name: string): Promise<AllocationProbe> {
  const out = join(await tempDir(`arbiter-bench-alloc-${name}-`), 'count.json');
  return {
    nodeArgs: ['--import', join(BENCH_OUT, 'support/alloc-probe.js')],
    env: { ARBITER_BENCH_ALLOC_FILE: out },
    async during(server, work) {
      await rm(out, { force: true });
      process.kill(server.pid, 'SIGUSR2');
      await work();
      process.kill(server.pid, 'SIGUSR2');
      for (let i = 0; i < 100; i++) {
        const text = await readFile(out, 'utf8').catch(() => undefined);
        if (text) return JSON.parse(text) as AllocationCount;
        await sleep(50);
      }
      throw new Error(`${name} wrote no allocation count to ${out}`);
    },
  };
}
