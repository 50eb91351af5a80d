import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { AuditEntry, AuditEventInput } from '../../src/audit/audit-log.js';
import { GENESIS_HASH, hashEntry } from '../../src/audit/chain.js';
import { anchorAt, changingEvent, recordingLogger } from '../../src/audit/file/test-fixtures.js';
import {
  openRedisAuditLog,
  type RedisAuditLog,
  type RedisAuditLogOptions,
} from '../../src/audit/redis/index.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

describe('Redis audit log: append and read', () => {
  let server: RedisServer;
  let log: RedisAuditLog;

  /** A log under its own prefix that checkpoints to `store` by entry count only (no timer). */
  const openCheckpointed = (
    keyPrefix: string,
    store: MemoryCheckpointStore,
    options: Partial<RedisAuditLogOptions> = {},
  ) => openRedisAuditLog({ redis: server.url, keyPrefix, checkpoints: { store, intervalMs: 0 }, ...options });

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
    expect(await log.verify()).toEqual({
      ok: true,
      entries_checked: 5,
      head: await log.head(),
      checkpoints_checked: 0,
      retained: { from_seq: 1, anchor: null },
    });
    expect(await log.isVerified(1)).toBe(true);
    expect(await log.isVerified(5)).toBe(true);
    for (const seq of [0, -1, 1.5, Number.NaN, 6, 99])
      expect(await log.isVerified(seq), `seq ${seq}`).toBe(false);
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

  it('refuses an event it cannot store, as the file log does, and appends the others of its batch', async () => {
    const own = await openRedisAuditLog({ redis: server.url, keyPrefix: 'refused-events:{audit}' });
    onTestFinished(() => own.close());
    const results = await Promise.allSettled([
      own.append(decisionEvent(1)),
      own.append(decisionEvent(2, { timestamp: 'yesterday' })),
      own.append(decisionEvent(3, { data: { amount: Number.NaN } })),
      own.append({ ...decisionEvent(4), hash: 'sha256:chosen' } as AuditEventInput),
      own.append(decisionEvent(5)),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.seq : r.reason))).toEqual([
      1,
      expect.objectContaining({
        code: 'INTERNAL',
        message: 'audit event timestamp "yesterday" is not ISO 8601',
      }),
      expect.objectContaining({
        code: 'INTERNAL',
        message: 'TypeError: NaN is not allowed in canonical JSON',
      }),
      expect.objectContaining({
        code: 'INTERNAL',
        message: 'audit event has a member named hash, which only its entry may have',
      }),
      2,
    ]);
    expect((await own.verify()).ok).toBe(true);
  });

  it('fails the batch of an event that changed after append() checked it, and appends on', async () => {
    const own = await openRedisAuditLog({ redis: server.url, keyPrefix: 'changed-event:{audit}' });
    onTestFinished(() => own.close());
    await expect(own.append(changingEvent(decisionEvent(1)))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit append failed',
      cause: new TypeError('BigInt is not allowed in canonical JSON'),
    });
    expect((await own.append(decisionEvent(2))).seq).toBe(1);
    expect((await own.verify()).ok).toBe(true);
  });

  it('refuses appends and trims once closed; closing again does nothing', async () => {
    const closing = await openRedisAuditLog({ redis: server.url, keyPrefix: 'closed:{audit}' });
    const entry = await closing.append(decisionEvent(1));
    await closing.close();
    const closed = { code: 'UNAVAILABLE', message: 'the audit log is closed' };
    await expect(closing.append(decisionEvent(2))).rejects.toMatchObject(closed);
    await expect(closing.trim(anchorAt(entry))).rejects.toMatchObject(closed);
    await expect(closing.close()).resolves.toBeUndefined();
  });

  it('keeps its keys under arbiter:{audit} unless told another prefix', async () => {
    const unprefixed = await openRedisAuditLog({ redis: server.url });
    await unprefixed.append(decisionEvent(1));
    await unprefixed.close();
    expect(unprefixed.keys.prefix).toBe('arbiter:{audit}');
    const admin = new Redis(server.url);
    onTestFinished(() => admin.disconnect());
    expect(await admin.xlen('arbiter:{audit}:stream')).toBe(1);
  });

  it('lists no checkpoints without a checkpoint store', async () => {
    expect(await log.checkpoints()).toEqual([]);
  });

  it('names the checkpoint store, not Redis, when checkpoints cannot be listed and none were', async () => {
    const store = new MemoryCheckpointStore();
    const outage = new Error('configmaps "arbiter-audit-checkpoints" is forbidden');
    store.outage = outage;
    const unlisted = await openCheckpointed('checkpoints-unlisted:{audit}', store);
    onTestFinished(() => unlisted.close());
    await unlisted.append(decisionEvent(1));
    const refused = {
      code: 'UNAVAILABLE',
      message: 'audit checkpoints could not be read from their store',
      cause: outage,
    };
    await expect(unlisted.checkpoints()).rejects.toMatchObject(refused);
    await expect(unlisted.verify()).rejects.toMatchObject(refused);
    await expect(unlisted.isVerified(1)).rejects.toMatchObject(refused);
  });

  it('checkpoints the head every 1000 entries by default, and once more when closed', async () => {
    const store = new MemoryCheckpointStore();
    const time = '2025-03-01T00:00:00.000Z';
    const checkpointed = await openCheckpointed('checkpoint-defaults:{audit}', store, {
      now: () => new Date(time),
    });
    await Promise.all(Array.from({ length: 999 }, (_, n) => checkpointed.append(decisionEvent(n))));
    const thousandth = await checkpointed.append(decisionEvent(999));
    await expect.poll(() => store.checkpoints.length).toBe(1);
    const last = await checkpointed.append(decisionEvent(1000));
    await checkpointed.close();
    const checkpointOf = (entry: AuditEntry) => ({
      seq: entry.seq,
      hash: entry.hash,
      entry_id: entry.id,
      time,
    });
    expect(store.checkpoints).toEqual([checkpointOf(thousandth), checkpointOf(last)]);
  });

  it('verifies against the checkpoints stored now, not a list read a moment ago', async () => {
    const store = new MemoryCheckpointStore();
    const checked = await openCheckpointed('fresh-checkpoints:{audit}', store);
    const entry = await checked.append(decisionEvent(1));
    // Saved by the leader, another replica.
    await store.save({ seq: 1, hash: entry.hash, entry_id: entry.id, time: entry.timestamp });
    expect(await checked.verify()).toMatchObject({ ok: true, checkpoints_checked: 1 });
    await checked.close();
  });

  it('checkpoints nothing when an empty log is closed', async () => {
    const store = new MemoryCheckpointStore();
    const empty = await openCheckpointed('checkpoint-empty:{audit}', store);
    await empty.close();
    expect(store.checkpoints).toEqual([]);
  });

  it('names the read that Redis did not answer within the read bound', async () => {
    const slow = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: 'slow-reads:{audit}',
      readTimeoutMs: 100,
    });
    const entry = await slow.append(decisionEvent(1));
    const reads: Array<[string, () => Promise<unknown>]> = [
      ['audit head', () => slow.head()],
      ['audit get', () => slow.get(entry.id)],
      ['audit by decision', () => slow.byDecision('dec-1')],
      ['audit query', () => slow.query({ order: 'asc', limit: 5 })],
      ['audit chain check', () => slow.isVerified(1)],
      ['audit retained range', () => slow.retained()],
    ];
    server.pause();
    try {
      for (const [what, read] of reads) {
        await expect(read(), what).rejects.toMatchObject({
          code: 'UNAVAILABLE',
          message: `${what} could not read Redis`,
          cause: { message: `${what} did not answer within 100 ms` },
        });
      }
    } finally {
      server.resume();
    }
    await slow.close();
  });

  it('reads the Redis clock again after a reconnect, and says so when it cannot', async () => {
    const admin = new Redis(server.url);
    onTestFinished(() => admin.disconnect());
    await admin.acl('SETUSER', 'clockless', 'on', '>secret', '~*', '&*', '+@all');
    const { logged, logger } = recordingLogger();
    const url = new URL(server.url);
    const clockless = await openRedisAuditLog({
      redis: `redis://clockless:secret@${url.host}`,
      keyPrefix: 'clock:{audit}',
      logger,
    });
    await admin.acl('SETUSER', 'clockless', '-time');
    await admin.client('KILL', 'USER', 'clockless');
    await expect
      .poll(() => logged)
      .toContainEqual({
        level: 'warn',
        details: { err: expect.objectContaining({ message: expect.stringMatching(/^NOPERM/) }) },
        message: 'audit log could not read the Redis clock',
      });
    await clockless.close();
  });
});
