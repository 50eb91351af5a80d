import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { openRedisAuditLog } from '../src/audit/redis/index.js';
import { sealEntry } from '../src/audit/chain.js';
import { encodeEntry } from '../src/audit/redis/entry-codec.js';
import { decisionEvent } from './support/payloads.js';

/**
 * One writer of the append benchmark, as its own process (a replica). argv[2]: JSON
 * {mode: 'chain' | 'chain-without-tree' | 'xadd', redisUrl, writer, durationMs, inFlight, stream, keyPrefix?}. Prints
 * "ready", waits for "go" on stdin, appends for durationMs keeping `inFlight` appends
 * (chain) or one pipeline of `inFlight` XADDs (xadd) outstanding, prints {count, failed,
 * elapsedMs, cpuMs, latenciesMs} (cpuMs: this process's CPU time, user and system, from
 * "go" to the end; latenciesMs: a sample of acknowledged appends' latencies, chain only).
 */
interface WriterOptions {
  /** chain-without-tree: the chain alone, no Merkle tree records (what the tree costs). */
  mode: 'chain' | 'chain-without-tree' | 'xadd';
  /** Key prefix of the chain (default: the backend's). */
  keyPrefix?: string;
  redisUrl: string;
  writer: number;
  durationMs: number;
  inFlight: number;
  stream: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as WriterOptions;
const timestamp = () => new Date().toISOString();
const eventOf = (i: number) => decisionEvent(options.writer * 10_000_000 + i, timestamp());

/** CPU time of this process when "go" came. */
let cpuAtGo: NodeJS.CpuUsage | undefined;

async function go(): Promise<void> {
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close();
        cpuAtGo = process.cpuUsage();
        resolve();
      }
    });
  });
}

interface WriterResult {
  count: number;
  failed: number;
  elapsedMs: number;
  latenciesMs: number[];
}

/** At most this many latencies per writer go back to the parent (every k-th append). */
const LATENCY_SAMPLES = 5000;

async function runChain(): Promise<WriterResult> {
  const log = await openRedisAuditLog({
    redis: options.redisUrl,
    appendTimeoutMs: 10_000,
    ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
    withoutTree: options.mode === 'chain-without-tree',
  });
  console.log('ready');
  await go();
  const started = performance.now();
  const end = started + options.durationMs;
  let count = 0;
  let failed = 0;
  const latencies: number[] = [];
  const lane = async (lane: number): Promise<void> => {
    for (let i = lane; performance.now() < end; i += options.inFlight) {
      const sent = performance.now();
      // A rejected append (503 for a caller) is counted, not fatal: the rate of those is a result too.
      await log.append(eventOf(i)).then(
        () => {
          count += 1;
          if (count % 8 === 0) latencies.push(performance.now() - sent);
        },
        () => (failed += 1),
      );
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, (_, i) => lane(i)));
  const elapsedMs = performance.now() - started;
  await log.close();
  const step = Math.max(1, Math.ceil(latencies.length / LATENCY_SAMPLES));
  return { count, failed, elapsedMs, latenciesMs: latencies.filter((_, i) => i % step === 0) };
}

/** The same payloads (sealed entries as the backend stores them), raw pipelined XADD. */
async function runXadd(): Promise<WriterResult> {
  const redis = new Redis(options.redisUrl);
  let previous: { seq: number; hash: string } | null = null;
  const payloads = Array.from({ length: 20_000 }, (_, i) => {
    const entry = sealEntry({ ...eventOf(i), id: `w${options.writer}-${i}` }, previous);
    previous = entry;
    return encodeEntry(entry);
  });
  console.log('ready');
  await go();
  const started = performance.now();
  const end = started + options.durationMs;
  let count = 0;
  while (performance.now() < end) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < options.inFlight; i++) {
      pipeline.xadd(options.stream, '*', 'entry', payloads[(count + i) % payloads.length]!);
    }
    await pipeline.exec();
    count += options.inFlight;
  }
  const elapsedMs = performance.now() - started;
  redis.disconnect();
  return { count, failed: 0, elapsedMs, latenciesMs: [] };
}

const result = options.mode === 'xadd' ? await runXadd() : await runChain();
const cpu = process.cpuUsage(cpuAtGo);
console.log(JSON.stringify({ ...result, cpuMs: (cpu.user + cpu.system) / 1000 }));
// stdin stays open (the parent's pipe): leave explicitly.
process.exit(0);
