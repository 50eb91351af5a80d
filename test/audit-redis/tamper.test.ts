import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { decisionEvent } from './support/events.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { useRedisSuite } from './support/redis-suite.js';

const ENTRIES = 12;

describe('Redis audit log: tampering in Redis is detected and named', () => {
  const redis = useRedisSuite();
  let counter = 0;

  /** A fresh chain of ENTRIES entries under its own prefix, checkpointed every 5 entries. */
  async function chain(): Promise<{
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
    });
    redis.track(log);
    const entries: AuditEntry[] = [];
    for (let n = 1; n <= ENTRIES; n += 1) entries.push(await log.append(decisionEvent(n)));
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toEqual([5, 10]);
    expect((await log.verify()).ok).toBe(true);
    return { log, keys: log.keys, entries, store };
  }

  /** What an intruder with redis-cli can do to one entry: streams are immutable, so rewrite the stream. */
  async function rewriteEntry(keys: RedisAuditKeys, seq: number, edit: (entry: AuditEntry) => AuditEntry) {
    const items = await redis.admin().xrange(keys.stream, '-', '+');
    const rewrite = redis.admin().multi().del(keys.stream);
    for (const [id, fields] of items) {
      const entry = JSON.parse(fields[1] as string) as AuditEntry;
      rewrite.xadd(keys.stream, id, 'entry', JSON.stringify(entry.seq === seq ? edit(entry) : entry));
    }
    await rewrite.exec();
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
  });

  it('an edit that also re-hashes the entry breaks the link to the next one', async () => {
    const { log, keys } = await chain();
    const { hashEntry } = await import('../../src/audit/chain.js');
    await rewriteEntry(keys, 3, (e) => {
      const edited = { ...e, risk_score: 0.01 };
      return { ...edited, hash: hashEntry(edited) };
    });
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
  });
});
