import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openRedisAuditLog, type RedisAuditLog } from '../src/audit/redis/index.js';
import { startControlPlane, type ControlPlane } from '../test/env/kube-apiserver.js';
import { startRedisServer, type RedisServer } from '../test/env/redis-server.js';
import { createObject, prepareCluster, startController } from './support/controller.js';
import { ADMIN_AUTH, AGENT_AUTH, EXAMPLE_PROPOSALS, decisionEvent } from './support/payloads.js';
import { startArbiter } from './support/processes.js';
import { propose, proposeLoop, type LoopAnswer } from './support/propose-loop.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

const TARGET_MS = 1_000;
/** agent-7 proposing files.read: ALLOW from the cluster's configuration. */
const FILES_READ = JSON.stringify({
  actor: { id: 'agent-7', type: 'automation' },
  action: { capability: 'files.read', parameters: {} },
});

/** Attempts of one client of Redis, each with when it was sent and whether it succeeded. */
interface Attempt {
  ok: boolean;
  sentAt: number;
  answeredAt: number;
}

interface Client {
  name: string;
  attempts(): readonly Attempt[];
  stop(): Promise<void>;
}

/** Runs `attempt` in a loop from `lanes` lanes, `pauseMs` apart, recording each outcome. */
function attemptLoop(name: string, lanes: number, pauseMs: number, attempt: () => Promise<unknown>): Client {
  const attempts: Attempt[] = [];
  let running = true;
  const lane = async () => {
    while (running) {
      const sentAt = performance.now();
      const ok = await attempt().then(
        () => true,
        () => false,
      );
      attempts.push({ ok, sentAt, answeredAt: performance.now() });
      await sleep(pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, () => lane()));
  return {
    name,
    attempts: () => attempts,
    async stop() {
      running = false;
      await done;
    },
  };
}

function fromAnswers(name: string, answers: readonly LoopAnswer[], stop: () => Promise<void>): Client {
  return {
    name,
    attempts: () =>
      answers.map((a) => ({ ok: a.status === 200, sentAt: a.sentAt, answeredAt: a.answeredAt })),
    stop,
  };
}

/** The first success of an attempt sent after `killedAt`, answered after `since`. */
async function firstSuccess(client: Client, killedAt: number, since: number): Promise<number> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const found = client.attempts().find((a) => a.ok && a.sentAt > killedAt && a.answeredAt >= since);
    if (found) return found.answeredAt;
    if (performance.now() > deadline) throw new Error(`recovery: ${client.name} did not recover within 20 s`);
    await sleep(5);
  }
}

interface RedisRecovery {
  outageMs: number;
  /** From the restart of redis-server (its own start included) to the first success, per client. */
  ms: Record<string, number>;
  redisStartMs: number;
}

async function redisOutages(redis: RedisServer, clients: Client[], outagesMs: number[]) {
  const results: RedisRecovery[] = [];
  for (const outageMs of outagesMs) {
    // Steady state first: every client succeeding.
    const settled = performance.now();
    for (const client of clients) await firstSuccess(client, settled, settled);
    await redis.kill9();
    const killedAt = performance.now();
    await sleep(outageMs);
    const backAt = performance.now();
    await redis.restart();
    const redisStartMs = performance.now() - backAt;
    const ms: Record<string, number> = {};
    for (const client of clients) ms[client.name] = (await firstSuccess(client, killedAt, backAt)) - backAt;
    console.log(
      `  Redis down ${outageMs} ms: ${Object.entries(ms)
        .map(([name, value]) => `${name} ${value.toFixed(0)} ms`)
        .join(', ')} (redis-server start ${redisStartMs.toFixed(0)} ms)`,
    );
    results.push({ outageMs, ms, redisStartMs });
  }
  return results;
}

/**
 * Redis killed (SIGKILL) and restarted, three clients of it going through the same outages:
 * the audit backend in this process (4 lanes appending), `arbiter serve --redis` under
 * propose load (4 clients), and, as the baseline, a plain ioredis client with its default
 * reconnection writing a key. Recovery is from the restart of redis-server (its own start
 * included) to the first success of an attempt sent after the kill.
 */
async function redisRecovery(report: Report, settings: BenchSettings): Promise<void> {
  const outagesMs = settings.quick ? [300, 1_000] : [300, 1_000, 3_000, 300, 1_000, 3_000];
  const redis = await startRedisServer({ appendfsync: 'always' });
  const stops: Array<() => Promise<void>> = [];
  try {
    const arbiter = await startArbiter({ redisUrl: redis.url, extraArgs: ['--redis-timeout', '1000'] });
    stops.push(() => arbiter.stop());
    const log: RedisAuditLog = await openRedisAuditLog({
      redis: redis.url,
      keyPrefix: 'bench-recovery:{audit}',
      appendTimeoutMs: 1_000,
      settleTimeoutMs: 300,
    });
    stops.push(() => log.close());
    const plain = new Redis(redis.url);
    plain.on('error', () => undefined); // reconnection errors are expected here
    let n = 0;
    const backend = attemptLoop('audit backend', 4, 5, () =>
      log.append(decisionEvent(n++, new Date().toISOString())),
    );
    stops.push(() => backend.stop());
    const baseline = attemptLoop('plain ioredis', 1, 5, () => plain.set('bench:baseline', String(n)));
    stops.push(async () => {
      // Its queued write would wait out the reconnection attempts if Redis were down now.
      const stopping = baseline.stop();
      plain.disconnect();
      await stopping;
    });
    const load = proposeLoop({
      url: arbiter.url,
      headers: AGENT_AUTH,
      bodies: EXAMPLE_PROPOSALS,
      clients: 4,
      pauseMs: 5,
    });
    const server = fromAnswers('arbiter serve', load.answers, () => load.stop());
    stops.push(() => server.stop());
    const results = await redisOutages(redis, [backend, server, baseline], outagesMs);
    addRedisFigures(report, results, outagesMs);
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error(err));
    await redis.dispose();
  }
}

function addRedisFigures(report: Report, results: RedisRecovery[], outagesMs: number[]): void {
  const of = (name: string) => results.map((r) => r.ms[name]!).sort((a, b) => a - b);
  const baseline = of('plain ioredis');
  const outages = `${outagesMs.length} outages of ${[...new Set(outagesMs)].map((ms) => ms / 1000).join(', ')} s`;
  const redisStart = Math.max(...results.map((r) => r.redisStartMs));
  for (const [name, label] of [
    ['audit backend', 'audit backend append'],
    ['arbiter serve', '`arbiter serve --redis` propose'],
  ] as const) {
    const ms = of(name);
    report.add({
      benchmark: 'Redis outage recovery',
      metric: `${label}: restart to first success, p50 of ${outages} (baseline: a plain ioredis client)`,
      arbiter: percentile(ms, 50),
      baseline: percentile(baseline, 50),
      unit: 'ms',
      higherIsBetter: false,
    });
    report.add({
      benchmark: 'Redis outage recovery',
      metric: `${label}: max`,
      arbiter: ms.at(-1)!,
      baseline: baseline.at(-1)!,
      unit: 'ms',
      higherIsBetter: false,
      target: { text: `< ${TARGET_MS / 1000} s`, met: ms.at(-1)! < TARGET_MS },
      note: `includes redis-server's own start, at most ${redisStart.toFixed(0)} ms`,
    });
  }
}

interface Window {
  from: number;
  to: number;
  /** When kube-apiserver was ready again (outage windows). */
  backAt?: number;
}

/** Latencies of the answers that overlap the window, how many failed, and where the slowest was. */
function inWindow(answers: readonly LoopAnswer[], window: Window) {
  const overlapping = answers.filter((a) => a.answeredAt >= window.from && a.sentAt <= window.to);
  const ms = overlapping.map((a) => a.answeredAt - a.sentAt);
  const slowest = overlapping[ms.indexOf(Math.max(...ms))];
  const since = (t: number | undefined) => (t === undefined ? Number.NaN : (t - window.from) / 1000);
  return {
    ms,
    failed: overlapping.filter((a) => a.status !== 200).length,
    slowest: { ms: Math.max(...ms), sentSec: since(slowest?.sentAt), backSec: since(window.backAt) },
  };
}

/** The controller's readiness says every watch is synced again. */
async function untilSynced(url: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const body = (await fetch(`${url}/readyz`)
      .then((r) => r.json())
      .catch(() => ({}))) as { checks?: Array<{ name: string; message?: string }> };
    const check = body.checks?.find((c) => c.name === 'kubernetes');
    if (/^synced/.test(check?.message ?? '')) return;
    await sleep(100);
  }
  throw new Error('recovery: the controller did not resync within 60 s');
}

async function kubeOutages(cp: ControlPlane, url: string, outages: number) {
  const downMs = 2_000;
  const baselineMs = 8_000;
  const load = proposeLoop({
    url,
    headers: ADMIN_AUTH,
    bodies: [FILES_READ],
    clients: 4,
    pauseMs: 25,
  });
  const baseline: Window[] = [];
  const outage: Window[] = [];
  try {
    for (let i = 0; i < outages; i++) {
      const quiet = performance.now();
      await sleep(baselineMs);
      baseline.push({ from: quiet, to: performance.now() });
      const from = performance.now();
      try {
        await cp.stopApiServer();
        await sleep(downMs);
      } finally {
        await cp.startApiServer();
      }
      const backAt = performance.now();
      await sleep(1_000);
      outage.push({ from, to: performance.now(), backAt });
      await untilSynced(url);
    }
  } finally {
    await load.stop();
  }
  const measure = (windows: Window[]) => {
    const each = windows.map((w) => inWindow(load.answers, w));
    return {
      ms: each.flatMap((e) => e.ms).sort((a, b) => a - b),
      failed: each.reduce((sum, e) => sum + e.failed, 0),
      seconds: windows.reduce((sum, w) => sum + (w.to - w.from), 0) / 1000,
      slowest: each.map((e) => e.slowest).reduce((a, b) => (b.ms > a.ms ? b : a)),
    };
  };
  return { baseline: measure(baseline), outage: measure(outage), downMs };
}

/**
 * kube-apiserver stopped for 2 s and started again (about 7-10 s until ready) while 4
 * clients propose to the controller: decisions come from the last good index, so no
 * proposal should stall. Baseline: the same load in quiet windows before each outage.
 */
async function kubeRecovery(report: Report, settings: BenchSettings): Promise<void> {
  const cp = await startControlPlane();
  try {
    const kubeconfig = await prepareCluster(cp);
    await createObject(cp, 'Capability', 'files-read', { name: 'files.read', riskLevel: 'low' });
    await createObject(cp, 'ActorGrant', 'agent-7', {
      actor: { id: 'agent-7' },
      grants: [{ capability: 'files.read' }],
    });
    const arbiter = await startController(kubeconfig, 'bench-recovery');
    try {
      const first = await propose(arbiter.url, ADMIN_AUTH, FILES_READ);
      if (first.outcome !== 'ALLOW')
        throw new Error(`recovery: the synced controller answered ${first.outcome}`);
      const outages = settings.quick ? 1 : 2;
      const { baseline, outage, downMs } = await kubeOutages(cp, arbiter.url, outages);
      const label = `${outages} x (${downMs / 1000} s down + restart + 1 s)`;
      report.add({
        benchmark: 'kube-apiserver outage',
        metric: `longest propose latency, 4 clients, ${label}: ${outage.ms.length} proposals in ${outage.seconds.toFixed(0)} s (baseline: ${baseline.ms.length} in ${baseline.seconds.toFixed(0)} s without outage)`,
        arbiter: outage.ms.at(-1)!,
        baseline: baseline.ms.at(-1)!,
        unit: 'ms',
        higherIsBetter: false,
        target: {
          text: `< ${TARGET_MS / 1000} s, none failed`,
          met: outage.ms.at(-1)! < TARGET_MS && outage.failed === 0,
        },
        note:
          `${outage.failed} failed during the outages, ${baseline.failed} without; the slowest was sent ` +
          `${outage.slowest.sentSec.toFixed(1)} s after the stop, the API server was ready at ${outage.slowest.backSec.toFixed(1)} s`,
      });
      report.add({
        benchmark: 'kube-apiserver outage',
        metric: 'propose latency p99 during the outages',
        arbiter: percentile(outage.ms, 99),
        baseline: percentile(baseline.ms, 99),
        unit: 'ms',
        higherIsBetter: false,
      });
    } finally {
      await arbiter.stop();
    }
  } finally {
    await cp.stop();
  }
}

/**
 * 3. Outage recovery: Redis (the audit log) and kube-apiserver (the configuration source)
 * going away and coming back; each should cost decisions under a second. (Asserted in
 * test/audit-redis and test/fault before, where a loaded machine made them flaky.)
 */
export async function recoveryBench(report: Report, settings: BenchSettings): Promise<void> {
  await redisRecovery(report, settings);
  await kubeRecovery(report, settings);
}
