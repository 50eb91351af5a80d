import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { openRedisAuditLog, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';
import { runWriter } from './support/writer-process.js';

const PER_WRITER = 80;

describe('Redis audit log: several writers on one chain', () => {
  let server: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });

  it('three writer processes appending at once produce one valid chain, each acknowledged entry once', async () => {
    const prefix = 'writers:{audit}';
    const outcomes = await Promise.all(
      ['w1', 'w2', 'w3'].map((w) => runWriter(server.url, prefix, w, PER_WRITER)),
    );

    const acknowledged = outcomes.flat().filter((o) => o.error === undefined);
    expect(outcomes.flat().filter((o) => o.error !== undefined)).toEqual([]);
    expect(acknowledged).toHaveLength(3 * PER_WRITER);

    const keys = new RedisAuditKeys(prefix);
    const stored = (await admin.xrange(keys.stream, '-', '+')).map(
      ([, fields]) => JSON.parse(fields[1] as string) as AuditEntry,
    );
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 3 * PER_WRITER }, (_, i) => i + 1));
    const storedIds = stored.map((e) => e.id);
    expect(new Set(storedIds).size).toBe(storedIds.length);
    for (const ack of acknowledged) expect(stored[ack.seq! - 1]?.id).toBe(ack.id);
    // Every writer's entries are all there: none lost, none doubled.
    for (const writer of ['w1', 'w2', 'w3']) {
      const ns = stored.filter((e) => e.actor_id === writer).map((e) => (e.data as { n: number }).n);
      expect(ns.sort((a, b) => a - b)).toEqual(Array.from({ length: PER_WRITER }, (_, i) => i));
    }

    const reader = await openRedisAuditLog({ redis: server.url, keyPrefix: prefix });
    expect(await reader.verify()).toMatchObject({ ok: true, entries_checked: 3 * PER_WRITER });
    await reader.close();
  });

  it('commits concurrent appends of one process in few script calls', async () => {
    const log = await openRedisAuditLog({ redis: server.url, keyPrefix: 'group:{audit}' });
    await admin.config('RESETSTAT');
    await Promise.all(Array.from({ length: 50 }, (_, n) => log.append(decisionEvent(n))));
    const stats = await admin.info('commandstats');
    const calls = Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? '0');
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan(10);
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });
});
