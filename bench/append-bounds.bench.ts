import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LEASE_MS } from '../src/audit/redis/append-scripts.js';
import {
  AuditAppendInDoubtError,
  openRedisAuditLog,
  RedisAuditKeys,
  type RedisAuditLog,
  type RedisAuditLogOptions,
} from '../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../test/env/redis-server.js';
import { decisionEvent } from './support/payloads.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

const event = (n: number) => decisionEvent(n, new Date().toISOString());

async function timedAppend(log: RedisAuditLog, n: number): Promise<number> {
  const started = performance.now();
  await log.append(event(n));
  return performance.now() - started;
}

/**
 * Three writers on one chain contend (90 appends each at once, so the losers take the
 * fairness lease), then the chain idles for 3 x LEASE_MS; each writer then appends once.
 * The lease must have lapsed: each append should take less than LEASE_MS. Baseline: the
 * same single append by a writer alone on its own chain, after the same idle time.
 */
async function idleAfterContention(report: Report, redis: RedisServer, rounds: number): Promise<void> {
  const options: RedisAuditLogOptions = { redis: redis.url, maxBatchEntries: 3, maxBatchesInFlight: 4 };
  const keys = new RedisAuditKeys('bench-contended:{audit}');
  const logs: RedisAuditLog[] = [];
  const admin = new Redis(redis.url);
  try {
    for (let w = 0; w < 3; w++) logs.push(await openRedisAuditLog({ ...options, keyPrefix: keys.prefix }));
    const solo = await openRedisAuditLog({ ...options, keyPrefix: 'bench-solo:{audit}' });
    logs.push(solo);
    const writers = logs.slice(0, 3);
    const idle: number[] = [];
    const alone: number[] = [];
    let leased = 0;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        writers.map((log) => Promise.all(Array.from({ length: 90 }, (_, n) => log.append(event(n))))),
      );
      if ((await admin.hget(keys.head, 'lease')) !== null) leased += 1;
      await sleep(3 * LEASE_MS);
      for (const log of writers) idle.push(await timedAppend(log, round));
      await sleep(3 * LEASE_MS);
      alone.push(await timedAppend(solo, round));
    }
    const verified = await writers[0]!.verify();
    if (!verified.ok) throw new Error(`append bounds: chain broken: ${JSON.stringify(verified.break)}`);
    idle.sort((a, b) => a - b);
    alone.sort((a, b) => a - b);
    const name = 'audit append bounds';
    report.add({
      benchmark: name,
      metric: `append on an idle chain after 3 writers contended, p50 of ${idle.length} (baseline: a writer alone)`,
      arbiter: percentile(idle, 50),
      baseline: percentile(alone, 50),
      unit: 'ms',
      higherIsBetter: false,
    });
    report.add({
      benchmark: name,
      metric: `append on an idle chain after contention, max`,
      arbiter: idle.at(-1)!,
      baseline: alone.at(-1)!,
      unit: 'ms',
      higherIsBetter: false,
      target: { text: `< lease (${LEASE_MS} ms)`, met: idle.at(-1)! < LEASE_MS },
      note: `a lease was held after ${leased} of ${rounds} contended bursts`,
    });
  } finally {
    for (const log of logs) await log.close();
    admin.disconnect();
  }
}

/** One append against Redis pausing writes: how long until it fails, and whether in doubt. */
async function pausedAppend(redis: RedisServer, admin: Redis, rep: number) {
  const log = await openRedisAuditLog({
    redis: redis.url,
    keyPrefix: `bench-slow-${rep}:{audit}`,
    appendTimeoutMs: 200,
    settleTimeoutMs: 100,
  });
  try {
    await log.append(event(1));
    await admin.client('PAUSE', 700, 'WRITE');
    const started = performance.now();
    const late = await log.append(event(2)).then(
      () => undefined,
      (err: unknown) => err,
    );
    const failedMs = performance.now() - started;
    if (late === undefined) throw new Error('append bounds: an append succeeded during CLIENT PAUSE WRITE');
    await sleep(800);
    const next = await log.append(event(3));
    if (next.seq !== 2)
      throw new Error(`append bounds: after the pause the chain went on at ${next.seq}, not 2`);
    return { failedMs, inDoubt: late instanceof AuditAppendInDoubtError };
  } finally {
    await log.close();
  }
}

/**
 * Redis pausing writes (CLIENT PAUSE 700 WRITE) longer than the append bound (200 ms,
 * settling 100 ms): how long the append takes to fail in doubt, against the 600 ms the
 * test allowed. The next append after the pause must settle it and continue the chain.
 */
async function inDoubtBound(report: Report, redis: RedisServer, repetitions: number): Promise<void> {
  const admin = new Redis(redis.url);
  const results: Array<{ failedMs: number; inDoubt: boolean }> = [];
  try {
    for (let rep = 0; rep < repetitions; rep++) results.push(await pausedAppend(redis, admin, rep));
  } finally {
    admin.disconnect();
  }
  const failedMs = results.map((r) => r.failedMs).sort((a, b) => a - b);
  const inDoubt = results.filter((r) => r.inDoubt).length;
  report.add({
    benchmark: 'audit append bounds',
    metric: `append refused while Redis pauses writes (bound 200 ms + settle 100 ms), max of ${repetitions}`,
    arbiter: failedMs.at(-1)!,
    unit: 'ms',
    target: { text: '< 600 ms', met: failedMs.at(-1)! < 600 },
    note: `p50 ${percentile(failedMs, 50).toFixed(0)} ms; ${inDoubt} failed in doubt, ${repetitions - inDoubt} as clean rejections`,
  });
}

/**
 * 4. Timing bounds of the Redis audit append that the tests of test/audit-redis asserted
 * with wall clocks: the fairness lease lapses when writers stop contending, and an append
 * against a stalled Redis fails within its bound.
 */
export async function appendBoundsBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    await idleAfterContention(report, redis, settings.quick ? 5 : 20);
    await inDoubtBound(report, redis, settings.quick ? 2 : 5);
  } finally {
    await redis.dispose();
  }
}
