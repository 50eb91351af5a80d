import { startRedisServer } from '../test/env/redis-server.js';
import { AGENT_AUTH, EXAMPLE_PROPOSALS } from './support/payloads.js';
import { startArbiter, startBaseline, type ServerProcess } from './support/processes.js';
import { runAtRate } from './support/rate-load.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';
import { runWrk, type WrkResult } from './support/wrk.js';

const PATH = '/api/v1/governance/propose';

/**
 * 1. propose: Arbiter (auth on, examples/manifests, audit to a real Redis) against an
 * express endpoint that parses the same body and answers fixed JSON. Maximum throughput
 * with wrk, then p99 at half of that rate with a constant-rate generator.
 */
export async function proposeBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  const servers: ServerProcess[] = [];
  try {
    const arbiter = await startArbiter({ redisUrl: redis.url });
    servers.push(arbiter);
    const baseline = await startBaseline();
    servers.push(baseline);
    const load = (server: ServerProcess, durationSec: number): Promise<WrkResult> =>
      runWrk({
        url: server.url + PATH,
        bodies: EXAMPLE_PROPOSALS,
        headers: AGENT_AUTH,
        connections: settings.connections,
        durationSec,
      });
    await load(arbiter, settings.warmupSec);
    await load(baseline, settings.warmupSec);
    const a = await load(arbiter, settings.loadSec);
    const b = await load(baseline, settings.loadSec);
    if (a.non2xx > 0 || a.socketErrors > 0)
      throw new Error(`propose answered ${a.non2xx} non-2xx, ${a.socketErrors} socket errors`);
    const name = 'propose';
    report.add({
      benchmark: name,
      metric: `max throughput (wrk, ${settings.connections} connections)`,
      arbiter: a.requestsPerSec,
      baseline: b.requestsPerSec,
      unit: 'req/s',
      target: { text: 'ratio >= 0.7', met: a.requestsPerSec / b.requestsPerSec >= 0.7 },
    });
    report.add({
      benchmark: name,
      metric: 'p50 at max load',
      arbiter: a.p50Ms,
      baseline: b.p50Ms,
      unit: 'ms',
      higherIsBetter: false,
    });
    report.add({
      benchmark: name,
      metric: 'p99 at max load',
      arbiter: a.p99Ms,
      baseline: b.p99Ms,
      unit: 'ms',
      higherIsBetter: false,
    });

    const rate = (server: ServerProcess, ratePerSec: number) =>
      runAtRate({
        url: server.url + PATH,
        bodies: [...EXAMPLE_PROPOSALS],
        headers: AGENT_AUTH,
        ratePerSec: Math.max(1, Math.round(ratePerSec)),
        durationSec: settings.loadSec,
        maxSockets: 64,
      });
    const half = a.requestsPerSec / 2;
    const ah = await rate(arbiter, half);
    const bh = await rate(baseline, half);
    if (ah.errors > 0 || ah.non2xx > 0) throw new Error(`constant-rate propose: ${JSON.stringify(ah)}`);
    report.add({
      benchmark: name,
      metric: `p50 at half of Arbiter's max (${Math.round(half)} req/s constant rate)`,
      arbiter: ah.p50Ms,
      baseline: bh.p50Ms,
      unit: 'ms',
      higherIsBetter: false,
    });
    report.add({
      benchmark: name,
      metric: `p99 at half of Arbiter's max (${Math.round(half)} req/s, achieved ${Math.round(ah.achievedPerSec)})`,
      arbiter: ah.p99Ms,
      baseline: bh.p99Ms,
      unit: 'ms',
      higherIsBetter: false,
      target: { text: 'p99 < 5 ms', met: ah.p99Ms < 5 },
    });
    report.add({
      benchmark: name,
      metric: 'RSS after the runs',
      arbiter: await arbiter.rssMiB(),
      baseline: await baseline.rssMiB(),
      unit: 'MiB',
      higherIsBetter: false,
    });
  } finally {
    for (const server of servers) await server.stop();
    await redis.dispose();
  }
}
