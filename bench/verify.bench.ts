import { hash } from 'node:crypto';
import { Redis } from 'ioredis';
import { ChainVerifier } from '../src/audit/chain-verifier.js';
import { parseEntryLine } from '../src/audit/entry-shape.js';
import { LineChainVerifier } from '../src/audit/export-verify.js';
import { openRedisAuditLog, RedisAuditKeys, DEFAULT_KEY_PREFIX } from '../src/audit/redis/index.js';
import { startRedisServer } from '../test/env/redis-server.js';
import { loadEntries } from './support/load-entries.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

/** Best of `runs` timings of fn, in ms. */
function best(runs: number, fn: () => void): number {
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

/**
 * 3. Chain verification: entries/s of the shared ChainVerifier over the stored bytes
 * (parse, JCS, SHA-256, links) and of the Redis backend's verify() (XRANGE chunks
 * included), against raw SHA-256 of the same stored bytes.
 */
export async function verifyBench(report: Report, settings: BenchSettings): Promise<void> {
  const redis = await startRedisServer({ appendfsync: 'no', extraArgs: ['--appendonly', 'no'] });
  try {
    const n = settings.verifyEntries;
    await loadEntries(redis.url, n, { startMs: Date.UTC(2026, 10, 1), stepMs: 1000 });
    const client = new Redis(redis.url);
    const keys = new RedisAuditKeys(DEFAULT_KEY_PREFIX);
    const stored: string[] = [];
    for (let start = '-'; ;) {
      const items = await client.xrange(keys.stream, start, '+', 'COUNT', 10_000);
      for (const [, fields] of items) stored.push(fields[1]!);
      if (items.length < 10_000) break;
      start = `(${items.at(-1)![0]}`;
    }
    client.disconnect();
    if (stored.length !== n) throw new Error(`expected ${n} stored entries, read ${stored.length}`);
    const bytes = stored.map((s) => Buffer.from(s));
    const rawMs = best(3, () => {
      for (const b of bytes) hash('sha256', b, 'hex'); // the one-shot API: the fastest raw SHA-256 in Node
    });
    // The path every verifier takes (backends, `arbiter audit verify`): stored bytes that
    // prove their own hash (sealed-link.ts), the full parse + JCS only for other forms.
    const verifierMs = best(3, () => {
      const verifier = new LineChainVerifier();
      stored.forEach((line, i) => verifier.pushLine(line, i + 1));
      if (!verifier.finish().ok) throw new Error('chain broken');
    });
    const fullMs = best(3, () => {
      const verifier = new ChainVerifier(null);
      for (const line of stored) {
        const parsed = parseEntryLine(line);
        if (parsed.kind !== 'entry' || verifier.push(parsed.entry)) throw new Error('chain broken');
      }
    });
    const rate = (ms: number) => n / (ms / 1000);
    report.add({
      benchmark: 'chain verify',
      metric: `verifier over ${n.toLocaleString('en-US')} stored entries (hash as stored + links)`,
      arbiter: rate(verifierMs),
      baseline: rate(rawMs),
      unit: 'entries/s',
      target: { text: 'ratio >= 0.5', met: rawMs / verifierMs >= 0.5 },
    });
    report.add({
      benchmark: 'chain verify',
      metric: 'the full path for entries in another byte form (parse + JCS + SHA-256 + links)',
      arbiter: rate(fullMs),
      baseline: rate(rawMs),
      unit: 'entries/s',
    });
    const log = await openRedisAuditLog({ redis: redis.url });
    try {
      const t0 = performance.now();
      const result = await log.verify();
      const backendMs = performance.now() - t0;
      if (!result.ok || result.entries_checked !== n) throw new Error(`verify: ${JSON.stringify(result)}`);
      report.add({
        benchmark: 'chain verify',
        metric: 'Redis backend verify() end to end (XRANGE chunks of 1,000)',
        arbiter: rate(backendMs),
        baseline: rate(rawMs),
        unit: 'entries/s',
      });
    } finally {
      await log.close();
    }
  } finally {
    await redis.dispose();
  }
}
