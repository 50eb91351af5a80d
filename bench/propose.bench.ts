import { join } from 'node:path';
import { startRedisServer } from '../test/env/redis-server.js';
import { CERBOS_VERSION, CHECK_PATH, checkQuery, startCerbos, waitForDecisions } from './support/cerbos.js';
import { AGENT_AUTH, EXAMPLE_PROPOSALS, SAME_QUESTION } from './support/payloads.js';
import { allocationProbe, type AllocationProbe } from './support/alloc-meter.js';
import {
  REPO,
  startArbiter,
  startBaseline,
  type ArbiterOptions,
  type ServerProcess,
} from './support/processes.js';
import { runAtRate } from './support/rate-load.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';
import { runWrk, type WrkResult } from './support/wrk.js';

const PATH = '/api/v1/governance/propose';

/**
 * 1. propose: Arbiter against the framework's ceiling (an express echo), with its audit log
 * on Redis and in a file, then against a real peer deciding the same question (Cerbos).
 */
export async function proposeBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    await againstExpress(report, settings, 'Redis', { redisUrl: redis.url });
  } finally {
    await redis.dispose();
  }
  await againstExpress(report, settings, 'file', {});
  await againstCerbos(report, settings);
}

/**
 * Arbiter (auth on, examples/manifests, the eight-proposal mix) against an express endpoint
 * that parses the same body and answers fixed JSON: maximum throughput with wrk, the heap
 * allocated per request during that run, then latency at half of Arbiter's maximum rate
 * with a constant-rate generator, the baseline at the same rate.
 */
async function againstExpress(
  report: Report,
  settings: BenchSettings,
  audit: 'Redis' | 'file',
  options: ArbiterOptions,
): Promise<void> {
  const servers: ServerProcess[] = [];
  try {
    const arbiterProbe = await allocationProbe('arbiter');
    const baselineProbe = await allocationProbe('baseline');
    const arbiter = await startArbiter({
      ...options,
      nodeArgs: arbiterProbe.nodeArgs,
      env: arbiterProbe.env,
    });
    servers.push(arbiter);
    const baseline = await startBaseline({ nodeArgs: baselineProbe.nodeArgs, env: baselineProbe.env });
    servers.push(baseline);
    const load = (server: ServerProcess, durationSec: number): Promise<WrkResult> =>
      runWrk({
        url: server.url + PATH,
        bodies: EXAMPLE_PROPOSALS,
        headers: AGENT_AUTH,
        connections: settings.connections,
        durationSec,
      });
    // Allocation is counted in a run of its own: the GC profiler slows a server a little.
    const allocated = async (server: ServerProcess, probe: AllocationProbe) => {
      let requests = 0;
      const count = await probe.during(server, async () => {
        requests = (await load(server, settings.warmupSec)).requests;
      });
      return count.allocatedBytes / requests;
    };
    await load(arbiter, settings.warmupSec);
    await load(baseline, settings.warmupSec);
    const a = await load(arbiter, settings.loadSec);
    const b = await load(baseline, settings.loadSec);
    const aBytes = await allocated(arbiter, arbiterProbe);
    const bBytes = await allocated(baseline, baselineProbe);
    expectAnswered('Arbiter', a);
    const name = `propose (audit: ${audit})`;
    report.add({
      benchmark: name,
      metric: `max throughput (wrk, ${settings.connections} connections)`,
      arbiter: a.requestsPerSec,
      baseline: b.requestsPerSec,
      unit: 'req/s',
      target: { text: 'ratio >= 0.7', met: a.requestsPerSec / b.requestsPerSec >= 0.7 },
    });
    addLatencyRows(report, name, a, b);
    report.add({
      benchmark: name,
      metric: `heap allocated per request (wrk, ${settings.warmupSec} s at max load)`,
      arbiter: aBytes / 1024,
      baseline: bBytes / 1024,
      unit: 'KiB',
      higherIsBetter: false,
      target: { text: '<= 30 KB', met: aBytes <= 30_000 },
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
      target: { text: "within 2x of the baseline's p99", met: ah.p99Ms <= 2 * bh.p99Ms },
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
  }
}

/**
 * Arbiter (auth on, hash-chained audit in a file) and Cerbos (decision log to a file) answer
 * the same question, half allowed and half denied: bench/fixtures/same-question.
 */
async function againstCerbos(report: Report, settings: BenchSettings): Promise<void> {
  const servers: ServerProcess[] = [];
  try {
    const arbiter = await startArbiter({ manifests: join(REPO, 'bench/fixtures/same-question/arbiter') });
    servers.push(arbiter);
    const cerbos = await startCerbos();
    servers.push(cerbos);
    await expectArbiterOutcomes(arbiter.url);
    const calls = await expectCerbosEffects(cerbos.url);
    await waitForDecisions(cerbos.decisionLogPath, calls);

    const arbiterLoad = (durationSec: number) =>
      runWrk({
        url: arbiter.url + PATH,
        bodies: [SAME_QUESTION.arbiter.allowed, SAME_QUESTION.arbiter.denied],
        headers: AGENT_AUTH,
        connections: settings.connections,
        durationSec,
      });
    const cerbosLoad = (durationSec: number) =>
      runWrk({
        url: cerbos.url + CHECK_PATH,
        bodies: [SAME_QUESTION.cerbos.allowed, SAME_QUESTION.cerbos.denied],
        headers: {},
        connections: settings.connections,
        durationSec,
      });
    await arbiterLoad(settings.warmupSec);
    await cerbosLoad(settings.warmupSec);
    const a = await arbiterLoad(settings.loadSec);
    const c = await cerbosLoad(settings.loadSec);
    expectAnswered('Arbiter', a);
    expectAnswered('Cerbos', c);
    addCerbosRows(report, settings, a, c);
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** Once before the load: Arbiter allows the staging query and denies the production one. */
async function expectArbiterOutcomes(url: string): Promise<void> {
  const outcome = async (body: string): Promise<unknown> => {
    const response = await fetch(url + PATH, {
      method: 'POST',
      headers: { ...AGENT_AUTH, 'Content-Type': 'application/json' },
      body,
    });
    return ((await response.json()) as { outcome?: unknown }).outcome;
  };
  const allowed = await outcome(SAME_QUESTION.arbiter.allowed);
  const denied = await outcome(SAME_QUESTION.arbiter.denied);
  if (allowed !== 'ALLOW' || denied !== 'DENY')
    throw new Error(`Arbiter answered ${String(allowed)} and ${String(denied)}, expected ALLOW and DENY`);
}

/** Once before the load, likewise for Cerbos; returns the call ids its decision log must hold. */
async function expectCerbosEffects(url: string): Promise<string[]> {
  const allowed = await checkQuery(url, SAME_QUESTION.cerbos.allowed);
  const denied = await checkQuery(url, SAME_QUESTION.cerbos.denied);
  if (allowed.effect !== 'EFFECT_ALLOW' || denied.effect !== 'EFFECT_DENY')
    throw new Error(
      `Cerbos answered ${allowed.effect} and ${denied.effect}, expected EFFECT_ALLOW and EFFECT_DENY`,
    );
  return [allowed.callId, denied.callId];
}

/** A non-2xx answer or a socket error would make a server look faster than it is. */
function expectAnswered(name: string, result: WrkResult): void {
  if (result.non2xx > 0 || result.socketErrors > 0)
    throw new Error(`${name} answered ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
}

function addCerbosRows(report: Report, settings: BenchSettings, a: WrkResult, c: WrkResult): void {
  const name = 'propose vs Cerbos';
  report.add({
    benchmark: name,
    metric: `max throughput (wrk, ${settings.connections} connections, half denied; Cerbos ${CERBOS_VERSION})`,
    arbiter: a.requestsPerSec,
    baseline: c.requestsPerSec,
    unit: 'req/s',
    target: { text: 'ratio >= 2', met: a.requestsPerSec / c.requestsPerSec >= 2 },
  });
  addLatencyRows(report, name, a, c);
}

function addLatencyRows(report: Report, name: string, a: WrkResult, b: WrkResult): void {
  for (const [label, key] of [
    ['p50', 'p50Ms'],
    ['p99', 'p99Ms'],
  ] as const) {
    report.add({
      benchmark: name,
      metric: `${label} at max load`,
      arbiter: a[key],
      baseline: b[key],
      unit: 'ms',
      higherIsBetter: false,
    });
  }
}
