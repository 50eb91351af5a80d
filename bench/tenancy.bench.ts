import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeManifests } from './support/generated-config.js';
import { ADMIN_AUTH } from './support/payloads.js';
import { BENCH_OUT, startArbiter, tempDir } from './support/processes.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';
import { tenancyObjects, tenancyProposals } from './support/tenancy-config.js';
import { runWrk, type WrkResult } from './support/wrk.js';

const TEAMS = 100;
const MEMORY_TEAMS = 1_000;

/**
 * Tenancy: propose with 100 teams that govern themselves (a Delegation, a NamespacedPolicy
 * and a NamespacedActorGrant each; every proposal passes the Delegation gate, its rate
 * budget and both tiers) against the same 100 agents granted by the platform with no
 * tenancy object at all, in the same run; then the index's heap at 1,000 teams of each.
 */
export async function tenancyBench(report: Report, settings: BenchSettings): Promise<void> {
  const none = await measure(false, settings);
  const teams = await measure(true, settings);
  const name = 'tenancy';
  report.add({
    benchmark: name,
    metric: `propose p50, ${settings.connections} connections: ${TEAMS} namespaces vs none`,
    arbiter: teams.p50Ms,
    baseline: none.p50Ms,
    unit: 'ms',
    higherIsBetter: false,
    target: { text: '<= 1.1 x none', met: teams.p50Ms <= 1.1 * none.p50Ms },
  });
  report.add({
    benchmark: name,
    metric: 'propose throughput',
    arbiter: teams.requestsPerSec,
    baseline: none.requestsPerSec,
    unit: 'req/s',
    target: { text: '>= none / 1.1', met: teams.requestsPerSec * 1.1 >= none.requestsPerSec },
  });
  const mib = async (namespaced: boolean) => (await indexHeapBytes(namespaced)) / 2 ** 20;
  report.add({
    benchmark: name,
    metric: `index heap: ${MEMORY_TEAMS.toLocaleString('en-US')} namespaces vs as many cluster actors`,
    arbiter: await mib(true),
    baseline: await mib(false),
    unit: 'MiB',
    higherIsBetter: false,
  });
}

async function measure(namespaced: boolean, settings: BenchSettings): Promise<WrkResult> {
  const dir = await tempDir('arbiter-bench-tenancy-');
  try {
    await writeManifests(dir, tenancyObjects(TEAMS, namespaced));
    const arbiter = await startArbiter({ manifests: dir });
    try {
      const load = (durationSec: number) =>
        runWrk({
          url: `${arbiter.url}/api/v1/governance/propose`,
          bodies: tenancyProposals(TEAMS, namespaced, 300),
          headers: ADMIN_AUTH,
          connections: settings.connections,
          durationSec,
        });
      await load(settings.warmupSec);
      const result = await load(settings.loadSec);
      if (result.non2xx > 0) throw new Error(`tenancy: ${result.non2xx} non-2xx answers`);
      return result;
    } finally {
      await arbiter.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function indexHeapBytes(namespaced: boolean): Promise<number> {
  const script = join(BENCH_OUT, 'support/index-memory.js');
  const args = ['--expose-gc', script, String(MEMORY_TEAMS), namespaced ? 'namespaced' : 'cluster'];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 });
  return Number(stdout.trim());
}
