import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, hashEntry } from '../../src/audit/chain.js';
import { openRedisAuditLog, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

describe('Redis audit log: append and read', () => {
  let server: RedisServer;
  let log: RedisAuditLog;

  beforeAll(async () => {
    server = await startRedisServer();
    log = await openRedisAuditLog({ redis: server.url, keyPrefix: 'basic:{audit}' });
  });
  afterAll(async () => {
    await log?.close();
    await server?.dispose();
  });

  it('links entries from genesis with gap-free seq and verifiable hashes', async () => {
    const first = await log.append(decisionEvent(1));
    const [second, third] = await Promise.all([log.append(decisionEvent(2)), log.append(decisionEvent(3))]);
    expect(first).toMatchObject({ seq: 1, previous_hash: GENESIS_HASH });
    expect(second).toMatchObject({ seq: 2, previous_hash: first.hash });
    expect(third).toMatchObject({ seq: 3, previous_hash: second.hash });
    for (const entry of [first, second, third]) expect(hashEntry(entry)).toBe(entry.hash);
    expect(await log.head()).toEqual({ seq: 3, hash: third.hash });
  });

  it('reads an entry by id and the entries of a decision', async () => {
    const decided = await log.append(decisionEvent(10, { decision_id: 'dec-trail' }));
    const executed = await log.append(
      decisionEvent(11, { decision_id: 'dec-trail', event_type: 'governance.execution' }),
    );
    expect(await log.get(decided.id)).toEqual(decided);
    expect(await log.get('no-such-id')).toBeUndefined();
    expect(await log.byDecision('dec-trail')).toEqual([decided, executed]);
    expect(await log.byDecision('dec-none')).toEqual([]);
  });

  it('verifies the chain and each entry', async () => {
    const report = await log.verify();
    expect(report).toMatchObject({ ok: true, entries_checked: 5, head: await log.head() });
    expect(await log.isVerified(4)).toBe(true);
    expect(await log.isVerified(99)).toBe(false);
  });

  it('feeds subscribers with entries appended by any writer, from the moment they subscribe', async () => {
    const seen: number[] = [];
    const unsubscribe = log.subscribe((entry) => seen.push(entry.seq));
    // At once: the feed's own connection is not up yet, and the entry must not be missed.
    const mine = await log.append(decisionEvent(20));
    const other = await openRedisAuditLog({
      redis: new Redis(server.url, { lazyConnect: true }),
      keyPrefix: 'basic:{audit}',
    });
    const theirs = await other.append(decisionEvent(21));
    await other.close();
    await expect.poll(() => seen).toEqual([mine.seq, theirs.seq]);
    unsubscribe();
  });

  it('opens and appends while the checkpoint store is unreachable', async () => {
    const unreachable = {
      list: () => Promise.reject(new Error('apiserver down')),
      save: () => Promise.reject(new Error('apiserver down')),
    };
    const warnings: string[] = [];
    const degraded = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: 'no-checkpoints:{audit}',
      checkpoints: { store: unreachable, everyEntries: 1, intervalMs: 0 },
      logger: { info: () => undefined, warn: (_, msg) => warnings.push(msg), error: () => undefined },
    });
    expect((await degraded.append(decisionEvent(1))).seq).toBe(1);
    await degraded.close();
    expect(warnings).toContain('audit checkpoint could not be saved');
  });
});
