import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { AuditAppendInDoubtError, openRedisAuditLog, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { AuditUnavailableError } from '../../src/model/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  n: number;
  entry?: AuditEntry;
  error?: unknown;
}

async function storedEntries(url: string, keys: RedisAuditKeys): Promise<AuditEntry[]> {
  const admin = new Redis(url);
  try {
    return (await admin.xrange(keys.stream, '-', '+')).map(
      ([, fields]) => JSON.parse(fields[1] as string) as AuditEntry,
    );
  } finally {
    admin.disconnect();
  }
}

describe('Redis audit log: Redis down or slow', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedisServer({ appendfsync: 'always' });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  it('kill -9 during appends loses no acknowledged entry, stores no cleanly rejected one, and the chain goes on', async () => {
    const prefix = 'crash:{audit}';
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: prefix,
      appendTimeoutMs: 1000,
      settleTimeoutMs: 300,
    });
    const outcomes: Outcome[] = [];
    let next = 0;
    let running = true;
    const worker = async () => {
      while (running) {
        const n = next++;
        try {
          outcomes.push({ n, entry: await log.append(decisionEvent(n, { data: { n } })) });
        } catch (error) {
          outcomes.push({ n, error });
          await sleep(10);
        }
      }
    };
    const workers = Array.from({ length: 4 }, () => worker());
    await expect.poll(() => outcomes.length, { timeout: 5000 }).toBeGreaterThan(40);
    await server.kill9();
    const crashedAt = outcomes.length;
    const ackedBeforeCrash = outcomes.filter((o) => o.entry).length;
    // Redis stays down until the workers have run into the outage.
    await expect
      .poll(() => outcomes.slice(crashedAt).filter((o) => o.error).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(4);
    await server.restart();
    await expect
      .poll(() => outcomes.filter((o) => o.entry).length - ackedBeforeCrash, { timeout: 10_000 })
      .toBeGreaterThan(40);
    running = false;
    await Promise.all(workers);
    await log.close();

    const stored = await storedEntries(server.url, log.keys);
    const storedNs = new Set(stored.map((e) => (e.data as { n: number }).n));
    const acked = outcomes.filter((o) => o.entry);
    const rejected = outcomes.filter((o) => o.error);
    expect(rejected.length).toBeGreaterThan(0);
    for (const o of rejected) expect(o.error).toBeInstanceOf(AuditUnavailableError);
    // Every acknowledged entry is stored, at the seq it was acknowledged with.
    for (const o of acked) expect(stored[o.entry!.seq - 1]).toEqual(o.entry);
    // A clean rejection is never stored; only an in-doubt one (reply lost in the crash) may be.
    const clean = rejected.filter((o) => !(o.error instanceof AuditAppendInDoubtError));
    for (const o of clean) expect(storedNs.has(o.n)).toBe(false);
    const inDoubt = rejected.length - clean.length;
    expect(stored.length).toBeLessThanOrEqual(acked.length + inDoubt);
    expect(stored.length).toBeGreaterThanOrEqual(acked.length);

    const reader = await openRedisAuditLog({ redis: server.url, keyPrefix: prefix });
    expect(await reader.verify()).toMatchObject({ ok: true, entries_checked: stored.length });
    await reader.close();
  });

  it('a Redis slower than the bound rejects the append, and the late command never lands', async () => {
    const keys = new RedisAuditKeys('slow:{audit}');
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: keys.prefix,
      appendTimeoutMs: 200,
      settleTimeoutMs: 100,
    });
    await log.append(decisionEvent(1, { data: { n: 1 } }));
    const admin = new Redis(server.url);
    const bystander = new Redis(server.url);
    // Scripts wait while writes are paused: Redis looks alive but answers too late. The pause
    // lasts until CLIENT UNPAUSE below (the timeout is only a backstop), so an append that
    // waited for Redis instead of failing within its bound would hang the test.
    await admin.client('PAUSE', 60_000, 'WRITE');
    let resumed = false;
    const blockedWrite = bystander.set('slow:bystander', '1').then(() => (resumed = true));
    onTestFinished(async () => {
      await admin.client('UNPAUSE');
      await blockedWrite;
      admin.disconnect();
      bystander.disconnect();
    });
    const late = await log.append(decisionEvent(2, { data: { n: 2 } })).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(AuditAppendInDoubtError);
    // It failed while Redis was still paused: another client's write is still blocked.
    expect(resumed).toBe(false);
    await admin.client('UNPAUSE');
    await blockedWrite;
    // The next append goes on the same connection, after the late script and its settle
    // call: it settles the doubtful batch first; the chain continues from entry 1.
    const after = await log.append(decisionEvent(3, { data: { n: 3 } }));
    expect(after.seq).toBe(2);
    const stored = await storedEntries(server.url, keys);
    expect(stored.map((e) => (e.data as { n: number }).n)).toEqual([1, 3]);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });

  it('with time to settle, a late append is a clean rejection', async () => {
    const keys = new RedisAuditKeys('settle:{audit}');
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: keys.prefix,
      appendTimeoutMs: 200,
      settleTimeoutMs: 2000,
    });
    const admin = new Redis(server.url);
    await admin.client('PAUSE', 500, 'WRITE');
    const late = await log.append(decisionEvent(1, { data: { n: 1 } })).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(AuditUnavailableError);
    expect(late).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(await storedEntries(server.url, keys)).toEqual([]);
    expect((await log.append(decisionEvent(2))).seq).toBe(1);
    admin.disconnect();
    await log.close();
  });

  it('with several batches in flight, a stall rejects each cleanly and none lands later', async () => {
    const keys = new RedisAuditKeys('stall-pipelined:{audit}');
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: keys.prefix,
      appendTimeoutMs: 200,
      settleTimeoutMs: 2000,
      maxBatchEntries: 2,
      maxBatchesInFlight: 4,
    });
    const admin = new Redis(server.url);
    await admin.client('PAUSE', 500, 'WRITE');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, n) => log.append(decisionEvent(n)).catch((err: unknown) => err)),
    );
    for (const outcome of outcomes) {
      expect(outcome).toBeInstanceOf(AuditUnavailableError);
      expect(outcome).not.toBeInstanceOf(AuditAppendInDoubtError);
    }
    expect(await storedEntries(server.url, keys)).toEqual([]);
    // Nothing sent later: a late batch would have to run before this append, which follows
    // every earlier call on the log's one connection.
    const after = await log.append(decisionEvent(9));
    expect(after.seq).toBe(1);
    expect(await storedEntries(server.url, keys)).toEqual([after]);
    admin.disconnect();
    await log.close();
  });

  it('opening against a Redis that does not answer fails as unavailable, naming the connect bound', async () => {
    server.pause();
    try {
      await expect(
        openRedisAuditLog({ redis: server.url, keyPrefix: 'paused:{audit}', connectTimeoutMs: 300 }),
      ).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: 'cannot open the Redis audit log',
        cause: { message: 'Redis connect did not answer within 300 ms' },
      });
    } finally {
      server.resume();
    }
  });

  it('opening while Redis is down fails as unavailable', async () => {
    await server.stop();
    try {
      await expect(
        openRedisAuditLog({ redis: server.url, keyPrefix: 'down:{audit}', connectTimeoutMs: 300 }),
      ).rejects.toBeInstanceOf(AuditUnavailableError);
    } finally {
      await server.restart();
    }
  });
});
