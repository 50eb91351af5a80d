import { describe, expect, it } from 'vitest';
import type { AuditEntry, RollbackReport } from '../../src/audit/audit-log.js';
import type { AuditLogger } from '../../src/audit/audit-logger.js';
import { anchorAt, recordingLogger } from '../../src/audit/file/test-fixtures.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { ANCHOR_FIELD } from '../../src/audit/redis/retention.js';
import { AuditUnavailableError } from '../../src/model/index.js';
import { decisionEvent } from './support/events.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { useRedisSuite } from './support/redis-suite.js';
import { resealed, rewriteItem, rewriteStream } from './support/tampering.js';

const ENTRIES = 12;

describe('Redis audit log: tampering in Redis is detected and named', () => {
  const redis = useRedisSuite();
  let counter = 0;

  /** A fresh chain of ENTRIES entries under its own prefix, checkpointed every 5 entries. */
  async function chain(logger?: AuditLogger): Promise<{
    log: RedisAuditLog;
    keys: RedisAuditKeys;
    entries: AuditEntry[];
    store: MemoryCheckpointStore;
  }> {
    counter += 1;
    const store = new MemoryCheckpointStore();
    const log = await openRedisAuditLog({
      redis: redis.url(),
      keyPrefix: `tamper${counter}:{audit}`,
      checkpoints: { store, everyEntries: 5, intervalMs: 0 },
      ...(logger ? { logger } : {}),
    });
    redis.track(log);
    const entries: AuditEntry[] = [];
    for (let n = 1; n <= ENTRIES; n += 1) entries.push(await log.append(decisionEvent(n)));
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toEqual([5, 10]);
    expect((await log.verify()).ok).toBe(true);
    return { log, keys: log.keys, entries, store };
  }

  async function rewriteEntry(keys: RedisAuditKeys, seq: number, edit: (entry: AuditEntry) => AuditEntry) {
    await rewriteItem(redis.admin(), keys, seq, (entry) => ['entry', JSON.stringify(edit(entry))]);
  }

  it('an edited field (DENY turned into ALLOW)', async () => {
    const { log, keys, entries } = await chain();
    await rewriteEntry(keys, 8, (e) => ({ ...e, outcome: 'ALLOW' }));
    const report = await log.verify();
    expect(report.ok).toBe(false);
    expect(report.break).toMatchObject({ seq: 8, entry_id: entries[7]!.id });
    expect(report.break?.reason).toMatch(/altered/);
    expect(await log.isVerified(7)).toBe(true);
    expect(await log.isVerified(8)).toBe(false);
    expect(await log.isVerified(9)).toBe(false);
    // Checkpoint 10 vouches for the entries after it, not for itself: verified from checkpoint 5.
    expect(await log.isVerified(10)).toBe(false);
    expect(await log.isVerified(11)).toBe(true);
  });

  it('an edit that also re-hashes the entry breaks the link to the next one', async () => {
    const { log, keys } = await chain();
    await rewriteEntry(keys, 3, (e) => resealed(e, { risk_score: 0.01 }));
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 4 });
    expect(report.break?.reason).toMatch(/previous_hash/);
  });

  it('a deleted entry (XDEL)', async () => {
    const { log, keys } = await chain();
    await redis.admin().xdel(keys.stream, '6-0');
    const report = await log.verify();
    expect(report.ok).toBe(false);
    expect(report.break).toMatchObject({ seq: 6 });
    expect(report.break?.reason).toMatch(/expected seq 6, found 7/);
    expect(await log.isVerified(5)).toBe(true);
    expect(await log.isVerified(6)).toBe(false);
  });

  it('the oldest entries trimmed (XTRIM MAXLEN)', async () => {
    const { log, keys } = await chain();
    await redis.admin().xtrim(keys.stream, 'MAXLEN', 4);
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 1 });
    expect(report.break?.reason).toMatch(/expected seq 1, found 9/);
  });

  it('the newest entries removed', async () => {
    const { log, keys } = await chain();
    await redis.admin().xdel(keys.stream, '11-0', '12-0');
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 11 });
    expect(report.break?.reason).toMatch(/truncated/);
  });

  it('a tail truncated with the chain head rewritten to match is caught by a checkpoint', async () => {
    const { log, keys, entries, store } = await chain();
    await redis.admin().xdel(keys.stream, '10-0', '11-0', '12-0');
    await redis.admin().hset(keys.head, 'seq', '9', 'hash', entries[8]!.hash, 'id', entries[8]!.id);
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 10 });
    expect(report.break?.reason).toMatch(/checkpoint 10 exists: entries were truncated/);

    // A replica opening the log says so at once.
    const errors: string[] = [];
    const logger = {
      info: () => undefined,
      warn: () => undefined,
      error: (_: object, msg: string) => errors.push(msg),
    };
    const reopened = await openRedisAuditLog({
      redis: redis.url(),
      keyPrefix: keys.prefix,
      checkpoints: { store, intervalMs: 0 },
      logger,
    });
    redis.track(reopened);
    expect(errors).toContainEqual(
      expect.stringMatching(
        /^audit entries 10\.\.\d+ were stored and are gone from Redis \(the chain ends before its newest checkpoint/,
      ),
    );
  });

  it('a stream rebuilt from scratch with a consistent but different history is caught by the checkpoints', async () => {
    const { log, keys } = await chain();
    const { sealEntry, storedText } = await import('../../src/audit/chain.js');
    const items = await redis.admin().xrange(keys.stream, '-', '+');
    let previous: AuditEntry | null = null;
    const rewrite = redis.admin().multi().del(keys.stream);
    for (const [id, fields] of items) {
      const stored: Partial<AuditEntry> = JSON.parse(fields[1] as string) as AuditEntry;
      delete stored.hash;
      delete stored.previous_hash;
      delete stored.seq;
      const content = stored as Omit<AuditEntry, 'hash' | 'previous_hash' | 'seq'>;
      const forged: AuditEntry = sealEntry({ ...content, outcome: 'ALLOW' }, previous);
      rewrite.xadd(keys.stream, id, 'entry', storedText(forged));
      previous = forged;
    }
    await rewrite.exec();
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 5 });
    expect(report.break?.reason).toMatch(/checkpoint at seq 5 names another hash/);
    expect(await log.isVerified(5)).toBe(false);
    expect(await log.isVerified(7)).toBe(false);
  });

  it('a retention anchor altered in Redis, the entry after it linked to it: the checkpoint at its seq catches both', async () => {
    const { log, keys, entries } = await chain();
    const anchor = anchorAt(entries[4]!);
    await log.trim(anchor);
    const forged = entries[3]!.hash;
    await redis.admin().hset(keys.head, ANCHOR_FIELD, JSON.stringify({ ...anchor, hash: forged }));
    await rewriteEntry(keys, 6, (e) => resealed(e, { risk_score: 0.01, previous_hash: forged }));
    expect(await log.verify()).toMatchObject({
      ok: false,
      break: { seq: 5, reason: 'checkpoint at seq 5 names another hash than the retention anchor' },
    });
    expect(await log.isVerified(6)).toBe(false);
  });

  it('stream items that hold no entry: the first one is named by its stream id', async () => {
    const { log, keys } = await chain();
    const broken: Record<string, string[]> = { '6-0': ['note', 'x'], '7-0': ['entry', '{not json'] };
    await rewriteStream(redis.admin(), keys, (id, fields) => [id, broken[id] ?? fields]);
    expect(await log.verify()).toMatchObject({
      ok: false,
      entries_checked: 5,
      break: { seq: 6, reason: 'stream item 6-0: no entry field' },
    });
  });

  it('entries stored under other stream ids than their seqs: the first one is named', async () => {
    const { log, keys, entries } = await chain();
    await rewriteStream(redis.admin(), keys, (id, fields) => [
      parseInt(id, 10) >= 6 ? id.replace('-0', '-1') : id,
      fields,
    ]);
    expect(await log.verify()).toMatchObject({
      ok: false,
      entries_checked: 5,
      break: { seq: 6, entry_id: entries[5]!.id, reason: 'stream item 6-1 holds an entry with seq 6' },
    });
    expect(await log.isVerified(7)).toBe(false);
  });

  it('of an altered entry and a later item that holds none, the altered entry is named', async () => {
    const { log, keys } = await chain();
    await rewriteEntry(keys, 8, (e) => ({ ...e, outcome: 'ALLOW' }));
    await rewriteStream(redis.admin(), keys, (id, fields) => [id, id === '11-0' ? ['note', 'x'] : fields]);
    const report = await log.verify();
    expect(report.break).toMatchObject({ seq: 8 });
    expect(report.break?.reason).toMatch(/altered/);
  });

  for (const [field, value, headSeq] of [
    ['seq', '11', 11],
    ['hash', `sha256:${'0'.repeat(64)}`, 12],
  ] as const) {
    it(`a chain head whose ${field} alone was changed`, async () => {
      const { log, keys } = await chain();
      await redis.admin().hset(keys.head, field, value);
      expect(await log.verify()).toMatchObject({
        ok: false,
        break: {
          seq: headSeq,
          reason: `the chain head (seq ${headSeq}) does not match the last entry (seq ${ENTRIES})`,
        },
      });
    });
  }

  it('a malformed entry is left out of query pages, and logged with what is wrong', async () => {
    const { logged, logger } = recordingLogger();
    const { log, keys, entries } = await chain(logger);
    await rewriteStream(redis.admin(), keys, (id, fields) => [
      id,
      id === '6-0' ? ['entry', '{not json'] : fields,
    ]);
    const page = await log.query({ order: 'asc', limit: 100 });
    expect(page.entries).toEqual(entries.filter((e) => e.seq !== 6));
    expect(logged).toContainEqual({
      level: 'error',
      details: { reason: expect.stringMatching(/^stored entry: not valid JSON/) },
      message: 'audit query skipped a malformed stream entry',
    });
  });

  it('a stream key replaced by a value of another type: a read fails with what Redis answered', async () => {
    const { log, keys, entries } = await chain();
    await redis.admin().multi().del(keys.stream).set(keys.stream, 'gone').exec();
    const error = await log.get(entries[0]!.id).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AuditUnavailableError);
    expect(String((error as Error).cause)).toMatch(/WRONGTYPE/);
    await expect(log.verify()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit verification could not read Redis',
      cause: { message: expect.stringMatching(/^WRONGTYPE /) },
    });
  });

  it('a chain cut back under its newest checkpoint: a replica opening says what was lost, tells, and records it', async () => {
    counter += 1;
    const store = new MemoryCheckpointStore();
    const prefix = `tamper${counter}:{audit}`;
    const writer = redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: prefix,
        checkpoints: { store, everyEntries: 5, intervalMs: 0 },
      }),
    );
    const entries: AuditEntry[] = [];
    for (let n = 1; n <= 17; n += 1) entries.push(await writer.append(decisionEvent(n)));
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toEqual([5, 10, 15]);
    const kept = entries[11]!;
    // As on a replica that never had entries 13..17: the stream ends, and the head and tree stand, at 12.
    await rewriteStream(redis.admin(), writer.keys, (id, fields) =>
      parseInt(id, 10) <= 12 ? [id, fields] : undefined,
    );
    await redis.admin().hset(writer.keys.head, 'seq', '12', 'hash', kept.hash, 'id', kept.id, 'tree', '12');

    const { logged, logger } = recordingLogger();
    const told: RollbackReport[] = [];
    const detectedAt = '2025-03-01T00:00:00.000Z';
    const reader = redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: prefix,
        checkpoints: { store, intervalMs: 0 },
        logger,
        onRollback: (rollback) => told.push(rollback),
        now: () => new Date(detectedAt),
      }),
    );
    const rollback = {
      lost_from_seq: 13,
      lost_to_seq: 15,
      found_head: { seq: 12, hash: kept.hash },
      detected_at: detectedAt,
    };
    expect(logged).toContainEqual({
      level: 'error',
      details: rollback,
      message:
        'audit entries 13..15 were stored and are gone from Redis (the chain ends before its newest checkpoint: a failover to a replica that lacked them? use --redis-wait-replicas); the chain continues from seq 12',
    });
    expect(told).toEqual([rollback]);
    await expect
      .poll(async () => (await reader.verify()).rollbacks)
      .toEqual([{ ...rollback, audit_ref: expect.any(String) }]);
    const [recorded] = (await reader.verify()).rollbacks!;
    expect(await reader.get(recorded!.audit_ref!)).toMatchObject({
      seq: 13,
      event_type: 'audit.rollback_detected',
      data: rollback,
    });
  });

  it('a chain head moved to another entry at its seq under a writer: the writer says that entry was lost', async () => {
    const { logged, logger } = recordingLogger();
    const { log, keys } = await chain(logger);
    const other = `sha256:${'1'.repeat(64)}`;
    await redis.admin().hset(keys.head, 'hash', other);
    const next = await log.append(decisionEvent(13));
    expect(next).toMatchObject({ seq: 13, previous_hash: other });
    expect(logged).toContainEqual({
      level: 'error',
      details: expect.objectContaining({
        lost_from_seq: ENTRIES,
        lost_to_seq: ENTRIES,
        found_head: { seq: ENTRIES, hash: other },
      }),
      message: `audit entries ${ENTRIES}..${ENTRIES} were stored and are gone from Redis (the head went back under this replica: a failover to a replica that lacked them? use --redis-wait-replicas); the chain continues from seq ${ENTRIES}`,
    });
  });

  it('verify lists the recorded rollbacks oldest first', async () => {
    const { log, keys } = await chain();
    const lostAt: number[] = [];
    for (const n of [1, 2]) {
      const head = await log.head();
      await redis.admin().hset(keys.head, 'hash', `sha256:${String(n).repeat(64)}`);
      await log.append(decisionEvent(ENTRIES + n));
      lostAt.push(head.seq);
      await expect.poll(async () => (await log.verify()).rollbacks?.length).toBe(n);
    }
    const { rollbacks } = await log.verify();
    expect(rollbacks?.map((r) => r.lost_from_seq)).toEqual(lostAt);
  });

  it('a rollback that cannot be recorded in the chain is logged with its range', async () => {
    counter += 1;
    const keys = new RedisAuditKeys(`tamper${counter}:{audit}`);
    await redis.admin().set(keys.stream, 'not a stream');
    const store = new MemoryCheckpointStore();
    await store.save({
      seq: 3,
      hash: `sha256:${'3'.repeat(64)}`,
      entry_id: 'gone-3',
      time: '2025-01-01T00:00:00.000Z',
    });
    const { logged, logger } = recordingLogger();
    redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: keys.prefix,
        checkpoints: { store, intervalMs: 0 },
        logger,
      }),
    );
    await expect
      .poll(() => logged.find((l) => l.message === 'the audit rollback could not be recorded in the chain'))
      .toEqual({
        level: 'error',
        details: expect.objectContaining({ err: expect.any(Error), lost_from_seq: 1, lost_to_seq: 3 }),
        message: 'the audit rollback could not be recorded in the chain',
      });
  });

  it('an id index naming a seq that holds another entry, or none: get answers nothing', async () => {
    const { log, keys, entries } = await chain();
    await redis.admin().hset(keys.ids, entries[2]!.id, '4');
    await redis.admin().xdel(keys.stream, '6-0');
    expect(await log.get(entries[2]!.id)).toBeUndefined();
    expect(await log.get(entries[5]!.id)).toBeUndefined();
    expect(await log.get(entries[3]!.id)).toEqual(entries[3]);
  });

  it('an id index replaced by a value of another type: get fails as unavailable', async () => {
    const { log, keys, entries } = await chain();
    await redis.admin().multi().del(keys.ids).set(keys.ids, 'gone').exec();
    await expect(log.get(entries[0]!.id)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit get could not read Redis',
      cause: { message: expect.stringMatching(/^WRONGTYPE /) },
    });
  });

  it('an entry past a chain head whose seq was lowered is not verified', async () => {
    const { log, keys } = await chain();
    await redis.admin().hset(keys.head, 'seq', String(ENTRIES - 1));
    expect(await log.isVerified(ENTRIES - 1)).toBe(true);
    expect(await log.isVerified(ENTRIES)).toBe(false);
  });
});
