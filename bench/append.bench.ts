import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { startRedisServer } from '../test/env/redis-server.js';
import { openRedisAuditLog } from '../src/audit/redis/index.js';
import { BENCH_OUT } from './support/processes.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

interface WriterResult {
  count: number;
  failed: number;
  elapsedMs: number;
  cpuMs: number;
  latenciesMs: number[];
}

export interface RunResult {
  perSec: number;
  failed: number;
  /** CPU time per stored entry, in us: the writer processes', and redis-server's. */
  writersCpuUs: number;
  redisCpuUs: number;
  /** Of acknowledged appends, queueing included (a sample), in ms. */
  p50Ms: number;
  p99Ms: number;
}

/** Starts `writers` writer processes, releases them together, and sums their entries/s. */
export async function runWriters(
  mode: 'chain' | 'chain-without-tree' | 'xadd',
  redisUrl: string,
  writers: number,
  durationMs: number,
  inFlight: number,
  keyPrefix?: string,
): Promise<RunResult> {
  const children = Array.from({ length: writers }, (_, writer) =>
    spawn(
      process.execPath,
      [
        join(BENCH_OUT, 'append-writer.js'),
        JSON.stringify({ mode, redisUrl, writer, durationMs, inFlight, stream: `raw:${writer}`, keyPrefix }),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const ready: Promise<void>[] = [];
  const results = children.map(
    (child) =>
      new Promise<WriterResult>((resolve, reject) => {
        let signalReady: () => void = () => undefined;
        ready.push(new Promise<void>((r) => (signalReady = r)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line === 'ready') signalReady();
          else if (line.startsWith('{')) resolve(JSON.parse(line) as WriterResult);
        });
        child.once('exit', (code) =>
          code === 0 ? undefined : reject(new Error(`writer exited with ${code}`)),
        );
      }),
  );
  await Promise.all(ready);
  const redis = new Redis(redisUrl);
  const redisCpuAtGo = await redisCpuSeconds(redis);
  for (const child of children) child.stdin.end('go\n');
  const done = await Promise.all(results);
  const redisCpu = (await redisCpuSeconds(redis)) - redisCpuAtGo;
  redis.disconnect();
  const entries = done.reduce((sum, r) => sum + r.count, 0);
  const latencies = done.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    perSec: done.reduce((sum, r) => sum + r.count / (r.elapsedMs / 1000), 0),
    failed: done.reduce((sum, r) => sum + r.failed, 0),
    writersCpuUs: (done.reduce((sum, r) => sum + r.cpuMs, 0) * 1000) / entries,
    redisCpuUs: (redisCpu * 1e6) / entries,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

/** redis-server's CPU time so far (user + system, its main thread and children), in s. */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return (
    field('used_cpu_user') +
    field('used_cpu_sys') +
    field('used_cpu_user_children') +
    field('used_cpu_sys_children')
  );
}

/** Latency of the acknowledged appends, and the rejected ones if any. */
function noteOf(run: RunResult): string {
  const latency = `append latency p50 ${run.p50Ms.toFixed(1)} ms, p99 ${run.p99Ms.toFixed(1)} ms`;
  return run.failed > 0 ? `${latency}; ${run.failed} appends rejected` : latency;
}

/**
 * 2. Audit append: entries/s through the chain (seal, compare-and-append script, group
 * commit) with several writer processes on one chain, against raw pipelined XADD of the
 * same sealed payloads from as many processes.
 */
export async function appendBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    const durationMs = settings.appendSec * 1000;
    const writers = settings.appendWriters;
    const chain = await runWriters('chain', redis.url, writers, durationMs, 64);
    const raw = await runWriters('xadd', redis.url, writers, durationMs, 64);
    report.add({
      benchmark: 'audit append',
      metric: `entries/s, ${writers} writer processes, 64 appends in flight each`,
      arbiter: chain.perSec,
      baseline: raw.perSec,
      unit: 'entries/s',
      target: { text: 'ratio >= 0.5', met: chain.perSec / raw.perSec >= 0.5 },
      note: noteOf(chain),
    });
    const single = await runWriters('chain', redis.url, 1, durationMs, 64 * writers);
    report.add({
      benchmark: 'audit append',
      metric: `entries/s, 1 writer process, ${64 * writers} appends in flight`,
      arbiter: single.perSec,
      baseline: raw.perSec,
      unit: 'entries/s',
      note: noteOf(single),
    });
    // Entries/s on a busy machine are its cores divided by the CPU time each entry costs:
    // at equal use of the cores, half of raw XADD's rate allows twice its CPU per entry.
    for (const [run, who] of [
      [chain, `${writers} writers`],
      [single, '1 writer'],
    ] as const) {
      report.add({
        benchmark: 'audit append',
        metric: `CPU time per entry, writer processes + redis-server, ${who} (baseline: raw XADD, ${writers} writers)`,
        arbiter: run.writersCpuUs + run.redisCpuUs,
        baseline: raw.writersCpuUs + raw.redisCpuUs,
        unit: 'us',
        higherIsBetter: false,
        note: `writers ${run.writersCpuUs.toFixed(1)} us + Redis ${run.redisCpuUs.toFixed(1)} us; raw: ${raw.writersCpuUs.toFixed(1)} + ${raw.redisCpuUs.toFixed(1)} us`,
      });
    }
    const log = await openRedisAuditLog({ redis: redis.url });
    try {
      const verified = await log.verify();
      if (!verified.ok)
        throw new Error(`chain broken after the append benchmark: ${JSON.stringify(verified.break)}`);
      const client = new Redis(redis.url);
      const conflicts = await client.info('commandstats');
      client.disconnect();
      console.log(
        `  chain verified: ${verified.entries_checked} entries; ${/cmdstat_evalsha:calls=(\d+)/.exec(conflicts)?.[1] ?? '?'} script calls`,
      );
    } finally {
      await log.close();
    }
  } finally {
    await redis.dispose();
  }
}
