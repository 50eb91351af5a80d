import { Redis } from 'ioredis';
import type { AuditQuery } from '../src/audit/audit-log.js';
import { DEFAULT_KEY_PREFIX, openRedisAuditLog, RedisAuditKeys } from '../src/audit/redis/index.js';
import { startRedisServer } from '../test/env/redis-server.js';
import { loadEntries } from './support/load-entries.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

const START_MS = Date.UTC(2026, 9, 1);
const SPAN_MS = 30 * 24 * 3600 * 1000;
const REPEATS = 30;

async function timings(run: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  await run();
  const ms: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** The least Redis work for the same page: the index range, its size, and the page's entries. */
async function rawPage(
  redis: Redis,
  key: string,
  min: number | string,
  max: number | string,
): Promise<number> {
  const [seqs, total] = await Promise.all([
    redis.zrangebyscore(key, min, max, 'LIMIT', 0, 50),
    redis.zcount(key, min, max),
  ]);
  const pipeline = redis.pipeline();
  const stream = new RedisAuditKeys(DEFAULT_KEY_PREFIX).stream;
  for (const seq of seqs) pipeline.xrange(stream, `${seq}-0`, `${seq}-0`);
  await pipeline.exec();
  return total;
}

/**
 * 5. Audit query: the first page (50, oldest first) of filtered queries over a million
 * entries (1,000 actors, 50 capabilities, 30 days), through the backend's query(),
 * against the raw Redis commands that fetch the same page from the same index.
 */
export async function queryBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'no', extraArgs: ['--appendonly', 'no'] });
  try {
    const n = settings.queryEntries;
    const stepMs = SPAN_MS / n;
    const t0 = performance.now();
    await loadEntries(redis.url, n, { startMs: START_MS, stepMs, actors: 1000, capabilities: 50 });
    console.log(
      `  loaded ${n.toLocaleString('en-US')} entries through the backend in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const log = await openRedisAuditLog({ redis: redis.url });
    const client = new Redis(redis.url);
    const keys = new RedisAuditKeys(DEFAULT_KEY_PREFIX);
    const mid = START_MS + SPAN_MS / 2;
    const since = new Date(mid).toISOString();
    const until = new Date(mid + 3600_000).toISOString();
    const page = { order: 'asc', limit: 50 } as const;
    const cases: Array<{ name: string; query: AuditQuery; raw: () => Promise<number> }> = [
      {
        name: 'by actor (1 of 1,000)',
        query: { ...page, actor_id: 'agent-500' },
        raw: () => rawPage(client, keys.index('actor_id', 'agent-500'), '-inf', '+inf'),
      },
      {
        name: 'by capability (1 of 50)',
        query: { ...page, capability: 'cap-7.run' },
        raw: () => rawPage(client, keys.index('capability', 'cap-7.run'), '-inf', '+inf'),
      },
      {
        name: 'by time range (1 hour of 30 days)',
        query: { ...page, since, until },
        raw: () => rawPage(client, keys.time, mid, mid + 3600_000),
      },
      {
        name: 'by actor and time range (1 day)',
        query: { ...page, actor_id: 'agent-500', since, until: new Date(mid + 86_400_000).toISOString() },
        raw: () => rawPage(client, keys.index('actor_id', 'agent-500'), '-inf', '+inf'),
      },
    ];
    try {
      for (const c of cases) {
        const result = await log.query(c.query);
        if (result.entries.length === 0) throw new Error(`query ${c.name} found nothing`);
        const arbiter = await timings(() => log.query(c.query));
        const raw = await timings(c.raw);
        report.add({
          benchmark: 'audit query',
          metric: `first page ${c.name}, p50 (total ${result.total.toLocaleString('en-US')})`,
          arbiter: arbiter.p50,
          baseline: raw.p50,
          unit: 'ms',
          higherIsBetter: false,
          target: { text: '< 50 ms', met: arbiter.p50 < 50 },
        });
        report.add({
          benchmark: 'audit query',
          metric: `first page ${c.name}, p99 of ${REPEATS}`,
          arbiter: arbiter.p99,
          baseline: raw.p99,
          unit: 'ms',
          higherIsBetter: false,
        });
      }
    } finally {
      client.disconnect();
      await log.close();
    }
  } finally {
    await redis.dispose();
  }
}
