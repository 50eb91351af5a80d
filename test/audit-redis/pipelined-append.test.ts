import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../src/audit/redis/append-scripts.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { AuditAppendInDoubtError } from '../../src/audit/redis/index.js';
import { AuditUnavailableError } from '../../src/model/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';
import { leaseToAnotherWriter, redisNowMs, streamEntries } from './support/stream.js';

describe('Redis audit log: several batches in flight, leases under contention', () => {
  let server: RedisServer;
  let admin: Redis;
  const logs: RedisAuditLog[] = [];

  const open = async (prefix: string, options: { appendTimeoutMs?: number } = {}) => {
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: prefix,
      maxBatchEntries: 3,
      maxBatchesInFlight: 4,
      ...options,
    });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    server = await startRedisServer({ appendfsync: 'no' });
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    for (const log of logs) await log.close();
    admin?.disconnect();
    await server?.dispose();
  });

  it('re-seals the batches behind one that lost the race: one chain, each acknowledged entry once', async () => {
    const keys = new RedisAuditKeys('pipe:{audit}');
    const writers = [await open(keys.prefix), await open(keys.prefix), await open(keys.prefix)];
    const acked = (
      await Promise.all(
        writers.map((log, w) =>
          Promise.all(
            Array.from({ length: 60 }, (_, n) =>
              log.append(decisionEvent(n, { actor_id: `w${w}`, data: { w, n } })),
            ),
          ),
        ),
      )
    ).flat();

    const entries = await streamEntries(admin, keys);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 180 }, (_, i) => i + 1));
    expect(new Set(entries.map((e) => e.id)).size).toBe(180);
    for (const entry of acked) expect(entries[entry.seq - 1]).toEqual(entry);
    expect(await writers[0]!.verify()).toMatchObject({ ok: true, entries_checked: 180 });
  });

  it("waits out another writer's lease, then appends", async () => {
    const keys = new RedisAuditKeys('leased:{audit}');
    const log = await open(keys.prefix);
    await log.append(decisionEvent(1));
    const leaseUntil = await leaseToAnotherWriter(admin, keys, 300);
    const entry = await log.append(decisionEvent(2));
    expect(entry.seq).toBe(2);
    // Acknowledged only once the lease had run out, in Redis's clock.
    expect(await redisNowMs(admin)).toBeGreaterThanOrEqual(leaseUntil);
  });

  it('rejects cleanly when a lease outlasts the bound, and stores nothing', async () => {
    const keys = new RedisAuditKeys('lease-timeout:{audit}');
    const log = await open(keys.prefix, { appendTimeoutMs: 150 });
    await leaseToAnotherWriter(admin, keys, 1000);
    const late = await log.append(decisionEvent(1)).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(AuditUnavailableError);
    expect(late).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(await streamEntries(admin, keys)).toEqual([]);
  });

  it('lets a next turn lapse when its writer never takes it', async () => {
    const keys = new RedisAuditKeys('next-gone:{audit}');
    const log = await open(keys.prefix);
    await admin.hset(keys.head, 'next', 'gone-writer', 'next_until', (await redisNowMs(admin)) + 100);
    const entry = await log.append(decisionEvent(1));
    expect(entry.seq).toBe(1);
  });

  it('under contention the losing writer takes a lease, and without contention it lapses', async () => {
    const keys = new RedisAuditKeys('contended:{audit}');
    const writers = [await open(keys.prefix), await open(keys.prefix), await open(keys.prefix)];
    await Promise.all(
      writers.map((log) => Promise.all(Array.from({ length: 90 }, (_, n) => log.append(decisionEvent(n))))),
    );
    expect(await admin.hget(keys.head, 'lease')).not.toBeNull();
    // Let the last lease and the next turn lapse: Redis's clock decides.
    const [leaseUntil, nextUntil] = await admin.hmget(keys.head, 'lease_until', 'next_until');
    const lapsesAt = Math.max(Number(leaseUntil ?? 0), Number(nextUntil ?? 0));
    await expect
      .poll(() => redisNowMs(admin), { interval: LEASE_MS, timeout: 10_000 })
      .toBeGreaterThan(lapsesAt);
    // An idle chain: any writer appends, whoever held the last lease, and none is refused
    // on the way (a refused writer is recorded as next) or takes a lease.
    const turns = async () => {
      const head = await admin.hgetall(keys.head);
      return [head.lease, head.lease_until, head.next, head.next_until, head.next_since];
    };
    const lapsed = await turns();
    for (const [w, log] of writers.entries()) {
      expect((await log.append(decisionEvent(100))).seq).toBe(271 + w);
      expect(await turns()).toEqual(lapsed);
    }
    expect(await writers[0]!.verify()).toMatchObject({ ok: true, entries_checked: 273 });
  });
});
