import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
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
  });
});
