import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAuditLog } from '../src/audit/file/file-audit-log.js';
import { openRedisAuditLog } from '../src/audit/redis/index.js';
import { startRedisServer } from '../test/env/redis-server.js';
import { runWriters } from './append.bench.js';
import { decisionEvent } from './support/payloads.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

/** Rounds of each mode, alternating: the machine drifts by more than the tree costs. */
const ROUNDS = 4;

/** The runs measure what they claim: a tree of every entry (once caught up), or none. */
async function checkTree(url: string, keyPrefix: string, withTree: boolean): Promise<void> {
  const log = await openRedisAuditLog({ redis: url, keyPrefix, withoutTree: !withTree });
  try {
    if (withTree) {
      const [head, lagging] = [(await log.head()).seq, await log.tree().size()];
      console.log(`  ${keyPrefix}: ${head} entries, the tree held ${lagging} at the end of the run`);
      await log.catchUpTree();
    }
    const [head, leaves] = [(await log.head()).seq, await log.tree().size()];
    if (leaves !== (withTree ? head : 0))
      throw new Error(`${keyPrefix}: tree holds ${leaves} of ${head} entries`);
  } finally {
    await log.close();
  }
}

/** Entries/s of the embedded file log over `durationMs`, `inFlight` appends outstanding. */
async function fileRate(withoutTree: boolean, durationMs: number, inFlight: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-bench-append-tree-'));
  try {
    const log = await FileAuditLog.open({
      dir,
      checkpointEvery: { entries: 1_000_000, seconds: 3600 },
      retainCheckpoints: 10,
      withoutTree,
    });
    const started = performance.now();
    const end = started + durationMs;
    let count = 0;
    const lane = async (lane: number): Promise<void> => {
      for (let i = lane; performance.now() < end; i += inFlight) {
        await log.append(decisionEvent(i, new Date().toISOString()));
        count += 1;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, (_, i) => lane(i)));
    const perSec = count / ((performance.now() - started) / 1000);
    const leaves = await log.tree().size();
    await log.close();
    // The two runs measure what they claim: a tree of every entry, or none.
    if (leaves !== (withoutTree ? 0 : count))
      throw new Error(`file tree holds ${leaves} of ${count} entries`);
    return perSec;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What the Merkle tree costs an append: entries/s with the tree against the chain alone,
 * in the same run, for the Redis stream (the tree's records ride in the append script)
 * and the embedded file (audit.tree written and synced beside the log). Runs alternate,
 * each on a fresh chain, so drift of the machine hits both alike.
 */
export async function appendTreeBench(report: Report, settings: BenchSettings): Promise<void> {
  const durationMs = (settings.appendSec * 1000) / 2;
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    const rates = { tree: 0, chain: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['chain', 'chain-without-tree'] as const) {
        const keyPrefix = `${mode}-${round}:{audit}`;
        const run = await runWriters(mode, redis.url, settings.appendWriters, durationMs, 64, keyPrefix);
        await checkTree(redis.url, keyPrefix, mode === 'chain');
        rates[mode === 'chain' ? 'tree' : 'chain'] += run.perSec / ROUNDS;
      }
    }
    report.add({
      benchmark: 'audit tree cost',
      metric: `Redis: entries/s with the tree (vs the chain alone), ${settings.appendWriters} writer processes`,
      arbiter: rates.tree,
      baseline: rates.chain,
      unit: 'entries/s',
      target: { text: 'ratio >= 0.9', met: rates.tree / rates.chain >= 0.9 },
    });
  } finally {
    await redis.dispose();
  }
  const file = { tree: 0, chain: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    file.tree += (await fileRate(false, durationMs, 256)) / ROUNDS;
    file.chain += (await fileRate(true, durationMs, 256)) / ROUNDS;
  }
  report.add({
    benchmark: 'audit tree cost',
    metric: 'file: entries/s with the tree (vs the chain alone), 256 appends in flight',
    arbiter: file.tree,
    baseline: file.chain,
    unit: 'entries/s',
    target: { text: 'ratio >= 0.9', met: file.tree / file.chain >= 0.9 },
  });
}
