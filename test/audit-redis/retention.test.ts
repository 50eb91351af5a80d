import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  AuditEntry,
  AuditEventInput,
  AuditQuery,
  Checkpoint,
  RetentionAnchor,
} from '../../src/audit/audit-log.js';
import { type AuditLogger, silentLogger } from '../../src/audit/audit-logger.js';
import { recordingLogger } from '../../src/audit/file/test-fixtures.js';
import { referenceLeafInput } from '../../src/audit/merkle/test-naive-tree.js';
import { leafHash } from '../../src/audit/merkle/tree-hash.js';
import { verifyInclusion } from '../../src/audit/merkle/verify-inclusion.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { recordAnchor, removeArchivedBatch } from '../../src/audit/redis/retention.js';
import { decisionEvent } from './support/events.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { useRedisSuite } from './support/redis-suite.js';
import { rewriteStream } from './support/tampering.js';

const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

/**
 * Entry n (its seq when appended one at a time): fields vary with n; decisions early-*
 * lie before seq 13 only, dec-* span the whole log. Timestamps go out of order both ways:
 * some later entries are older than archived ones, some archived ones newer than retained.
 */
function eventFor(n: number): AuditEventInput {
  const second = 100 + n + (n % 5 === 2 ? -40 : 0) + (n % 7 === 3 ? 25 : 0);
  return decisionEvent(n, {
    timestamp: at(second),
    actor_id: `agent-${n % 3}`,
    capability: n % 2 === 0 ? 'db.read' : 'db.write',
    outcome: n % 4 === 0 ? 'DENY' : 'ALLOW',
    decision_id: n <= 12 ? `early-${n % 2}` : `dec-${n % 9}`,
    event_type: n % 6 === 0 ? 'governance.review' : 'governance.decision',
  });
}

const EQUALITY = ['actor_id', 'capability', 'outcome', 'decision_id', 'event_type'] as const;

function matches(entry: AuditEntry, query: Partial<AuditQuery>): boolean {
  const t = Date.parse(entry.timestamp);
  return (
    EQUALITY.every((field) => query[field] === undefined || entry[field] === query[field]) &&
    (query.since === undefined || t >= Date.parse(query.since)) &&
    (query.until === undefined || t <= Date.parse(query.until))
  );
}

/** Pages through a query: every page's total, and the seqs of all pages, are what a plain filter gives. */
async function expectPages(
  log: RedisAuditLog,
  query: Omit<AuditQuery, 'after'>,
  entries: readonly AuditEntry[],
): Promise<void> {
  const want = entries.filter((e) => matches(e, query)).map((e) => e.seq);
  if (query.order === 'desc') want.reverse();
  const got: number[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await log.query({ ...query, ...(after ? { after } : {}) });
    expect(page.total, JSON.stringify(query)).toBe(want.length);
    got.push(...page.entries.map((e) => e.seq));
    if (page.next === null) break;
    after = page.next;
  }
  expect(got, JSON.stringify(query)).toEqual(want);
}

const FILTERS: Partial<AuditQuery>[] = [
  {},
  { actor_id: 'agent-0' },
  { actor_id: 'agent-2' },
  { capability: 'db.read' },
  { outcome: 'DENY' },
  { decision_id: 'dec-3' },
  { decision_id: 'early-0' },
  { event_type: 'governance.review' },
  { since: at(0) },
  { since: at(120) },
  { until: at(125) },
  { until: at(60) },
  { since: at(95), until: at(135) },
  { since: at(135), until: at(150) },
  { since: at(200) },
  { actor_id: 'agent-1', since: at(100) },
  { capability: 'db.write', outcome: 'ALLOW' },
  { capability: 'db.read', outcome: 'DENY', since: at(110), until: at(160) },
  { decision_id: 'dec-3', until: at(140) },
  { actor_id: 'agent-0', decision_id: 'early-1' },
];

/** Every filter, both orders, several page sizes: exactly the retained matches, exact totals. */
async function expectQueriesMatch(log: RedisAuditLog, retained: readonly AuditEntry[]): Promise<void> {
  for (const filters of FILTERS) {
    for (const order of ['asc', 'desc'] as const) {
      for (const limit of [1, 3, 100]) await expectPages(log, { ...filters, order, limit }, retained);
    }
  }
}

const half = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });

function anchorOf(checkpoint: Checkpoint, archive = 'audit-archive.jsonl'): RetentionAnchor {
  return {
    seq: checkpoint.seq,
    hash: checkpoint.hash,
    entry_id: checkpoint.entry_id,
    checkpoint_time: checkpoint.time,
    archived_at: '2025-02-01T00:00:00.000Z',
    archive,
  };
}

function anchorAt(entry: AuditEntry): RetentionAnchor {
  return anchorOf({ seq: entry.seq, hash: entry.hash, entry_id: entry.id, time: entry.timestamp });
}

describe('Redis audit log: retention (trim at an archived checkpoint)', () => {
  const redis = useRedisSuite();
  let counter = 0;

  async function open(
    prefix: string,
    options: {
      store?: MemoryCheckpointStore;
      trimBatchEntries?: number;
      maxBatchEntries?: number;
      logger?: AuditLogger;
    } = {},
  ): Promise<RedisAuditLog> {
    const { store, ...rest } = options;
    return redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: prefix,
        ...(store ? { checkpoints: { store, everyEntries: 10, intervalMs: 0 } } : {}),
        ...rest,
      }),
    );
  }

  function nextPrefix(): string {
    counter += 1;
    return `retention${counter}:{audit}`;
  }

  async function appendEach(
    log: RedisAuditLog,
    from: number,
    to: number,
    event: (n: number) => AuditEventInput = eventFor,
  ): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    for (let n = from; n <= to; n += 1) out.push(await log.append(event(n)));
    return out;
  }

  /** What Redis holds for entries up to the anchor: nothing but the one time floor record (and the tree). */
  async function expectNothingArchived(keys: RedisAuditKeys, anchorSeq: number, headSeq: number) {
    const admin = redis.admin();
    const stream = await admin.xrange(keys.stream, '-', '+');
    expect(stream.map(([id]) => Number(id.split('-')[0]))).toEqual(
      Array.from({ length: headSeq - anchorSeq }, (_, i) => anchorSeq + 1 + i),
    );
    const idSeqs = (await admin.hvals(keys.ids)).map(Number);
    expect(idSeqs).toHaveLength(headSeq - anchorSeq);
    expect(idSeqs.every((s) => s > anchorSeq)).toBe(true);
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await admin.scan(cursor, 'MATCH', `${keys.prefix}:*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    const zsets = [];
    for (const key of found) if ((await admin.type(key)) === 'zset') zsets.push(key);
    if (headSeq > anchorSeq) expect(zsets).toContain(keys.time);
    for (const key of zsets) {
      const archived = (await admin.zrange(key, 0, -1)).map(Number).filter((s) => s <= anchorSeq);
      expect(archived, key).toHaveLength(key === keys.timeFloor ? 1 : 0);
    }
    expect((await admin.zrange(keys.time, 0, -1)).map(Number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: headSeq - anchorSeq }, (_, i) => anchorSeq + 1 + i),
    );
  }

  it('removes the archived entries; everything retained answers as before, and appends go on', async () => {
    const prefix = nextPrefix();
    const store = new MemoryCheckpointStore();
    const log = await open(prefix, { store, trimBatchEntries: 7 });
    const entries = await appendEach(log, 1, 60);
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toEqual([10, 20, 30, 40, 50, 60]);
    const checkpoint = (await log.checkpoints()).find((c) => c.seq === 30)!;
    const anchor = anchorOf(checkpoint);

    await log.trim(anchor);

    expect(await log.retained()).toEqual({ from_seq: 31, anchor });
    const retained = entries.slice(30);
    await expectQueriesMatch(log, retained);
    const page = await log.query({ order: 'asc', limit: 100 });
    expect(page.entries).toEqual(retained);
    expect(await log.get(entries[29]!.id)).toBeUndefined();
    expect(await log.get(entries[0]!.id)).toBeUndefined();
    expect(await log.get(entries[30]!.id)).toEqual(entries[30]);
    expect(await log.byDecision('early-0')).toEqual([]);
    expect(await log.byDecision('dec-3')).toEqual(retained.filter((e) => e.decision_id === 'dec-3'));
    // Its first entry is the first retained one.
    expect(await log.byDecision('dec-4')).toEqual(retained.filter((e) => e.decision_id === 'dec-4'));

    const report = await log.verify();
    expect(report).toMatchObject({
      ok: true,
      entries_checked: 30,
      head: { seq: 60, hash: entries[59]!.hash },
      checkpoints_checked: 3,
      retained: { from_seq: 31, anchor },
    });
    for (const seq of [31, 35, 40, 41, 60]) expect(await log.isVerified(seq), `seq ${seq}`).toBe(true);
    for (const seq of [1, 29, 30]) expect(await log.isVerified(seq), `seq ${seq}`).toBe(false);

    // The tree is untouched: proofs of retained entries still verify.
    const tree = log.tree();
    expect(await tree.size()).toBe(60);
    const root = await tree.root(60);
    for (const entry of [entries[30]!, entries[44]!, entries[59]!]) {
      const proof = await tree.inclusionProof(entry.seq - 1, 60);
      expect(() =>
        verifyInclusion(entry.seq - 1, 60, leafHash(referenceLeafInput(entry)), proof, root),
      ).not.toThrow();
    }

    await expectNothingArchived(log.keys, 30, 60);

    // The chain goes on from the head; trimming again is idempotent, then a newer anchor.
    const more = await appendEach(log, 61, 75);
    expect(more[0]!.previous_hash).toBe(entries[59]!.hash);
    await log.trim(anchor);
    await expectQueriesMatch(log, [...retained, ...more]);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 45 });

    await expect.poll(() => store.checkpoints.at(-1)?.seq).toBe(70);
    const later = anchorOf(
      (await log.checkpoints()).find((c) => c.seq === 50)!,
      'audit-2.jsonl',
    );
    await log.trim(later);
    expect(await log.retained()).toEqual({ from_seq: 51, anchor: later });
    const retainedLater = [...entries.slice(50), ...more];
    await expectQueriesMatch(log, retainedLater);
    await expectNothingArchived(log.keys, 50, 75);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 25, retained: { from_seq: 51 } });
    expect(await log.isVerified(52)).toBe(true);

    // Another replica opened now sees the same retained log.
    const other = await open(prefix);
    expect(await other.retained()).toEqual({ from_seq: 51, anchor: later });
    await expectQueriesMatch(other, retainedLater);
  });

  it('refuses an anchor behind the recorded one, one it does not hold, or one the tree lacks', async () => {
    const prefix = nextPrefix();
    const log = await open(prefix);
    const entries = await appendEach(log, 1, 40);
    const refused = (anchor: RetentionAnchor, message: string) =>
      expect(log.trim(anchor)).rejects.toMatchObject({ code: 'CONFLICT', message });
    /** An anchor whose hash or id is not the entry's at its seq. */
    const notTheEntry = (anchor: RetentionAnchor) => {
      const entry = entries[anchor.seq - 1]!;
      return refused(
        anchor,
        `the audit entry at seq ${anchor.seq} is ${entry.id} with hash ${entry.hash}, not the anchor's ${anchor.entry_id} with hash ${anchor.hash}`,
      );
    };
    const [e19, e20] = [entries[18]!, entries[19]!];
    await notTheEntry({ ...anchorAt(e20), hash: e19.hash });
    await notTheEntry({ ...anchorAt(e20), entry_id: e19.id });
    await refused(
      { ...anchorAt(e20), seq: 41 },
      'the audit log holds no entry at seq 41: not a retention anchor',
    );
    expect(await log.retained()).toEqual({ from_seq: 1, anchor: null });

    await log.trim(anchorAt(e20));
    await refused(
      anchorAt(entries[9]!),
      'the audit log is already archived up to seq 20; an anchor at seq 10 would move it back',
    );
    await refused(
      { ...anchorAt(e20), hash: e19.hash },
      `the audit log is archived up to seq 20 with another hash than ${e19.hash}`,
    );
    await notTheEntry({ ...anchorAt(entries[29]!), hash: entries[28]!.hash });
    expect(await log.retained()).toEqual({ from_seq: 21, anchor: anchorAt(e20) });

    // A tree that lags the chain (a log older than the tree): not until it has caught up.
    await redis.admin().hset(log.keys.head, 'tree', '25');
    await expect(log.trim(anchorAt(entries[29]!))).rejects.toThrow(
      'the Merkle tree has not caught up to seq 30 yet; try again',
    );
    await redis.admin().hset(log.keys.head, 'tree', '40');
    await log.trim(anchorAt(entries[29]!));
    expect((await log.retained()).from_seq).toBe(31);
  });

  it('refuses an anchor that is none: a seq below 1 or not an integer, or no hash', async () => {
    const log = await open(nextPrefix());
    const [first] = await appendEach(log, 1, 2);
    const refused = (edit: Partial<RetentionAnchor>, message: string) =>
      expect(log.trim({ ...anchorAt(first!), ...edit })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message,
      });
    await refused({ seq: 0 }, 'not a retention anchor: seq 0');
    await refused({ seq: 1.5 }, 'not a retention anchor: seq 1.5');
    await refused({ hash: undefined }, 'not a retention anchor: seq 1');
    expect(await log.retained()).toEqual({ from_seq: 1, anchor: null });
  });

  it('records the anchor in the head hash as documented, and logs it once: a rerun records nothing new', async () => {
    const { logged, logger } = recordingLogger();
    const log = await open(nextPrefix(), { logger });
    const entries = await appendEach(log, 1, 12);
    const anchor = anchorAt(entries[9]!);
    await log.trim(anchor);
    await log.trim(anchor);
    const [recorded, from] = await redis.admin().hmget(log.keys.head, 'anchor', 'from');
    expect(JSON.parse(recorded!)).toEqual(anchor);
    expect(from).toBe('11');
    expect(logged).toEqual([
      {
        level: 'info',
        details: { anchor_seq: 10, archive: 'audit-archive.jsonl', retained_from: 11 },
        message: 'audit retention anchor recorded; removing the archived entries from Redis',
      },
    ]);
  });

  it('two trims to one anchor at once record it once and log it once', async () => {
    const { logged, logger } = recordingLogger();
    const log = await open(nextPrefix(), { logger });
    const entries = await appendEach(log, 1, 12);
    const anchor = anchorAt(entries[9]!);
    // On the log's one connection, both read the head before either records: the second
    // record script finds the anchor recorded already.
    await Promise.all([log.trim(anchor), log.trim(anchor)]);
    expect(await log.retained()).toEqual({ from_seq: 11, anchor });
    expect(await redis.admin().xlen(log.keys.stream)).toBe(2);
    expect(logged.map((line) => line.message)).toEqual([
      'audit retention anchor recorded; removing the archived entries from Redis',
    ]);
  });

  it('refuses an anchor when another trim records a newer one, or one at its seq with another hash, meanwhile', async () => {
    const log = await open(nextPrefix());
    const entries = await appendEach(log, 1, 12);
    const admin = redis.admin();
    const anchor = anchorAt(entries[9]!);
    const overtaken = async (other: RetentionAnchor, message: string) => {
      const trim = recordAnchor(admin, log.keys, anchor, { requireTree: true, logger: silentLogger });
      // The trim sent its first read at once; this write on its connection lands after that
      // read and before the trim's record script.
      await admin.hset(log.keys.head, 'anchor', JSON.stringify(other), 'from', String(other.seq + 1));
      await expect(trim).rejects.toMatchObject({ code: 'CONFLICT', message });
      expect(await log.retained()).toEqual({ from_seq: other.seq + 1, anchor: other });
      await admin.hdel(log.keys.head, 'anchor', 'from');
    };
    await overtaken(
      anchorAt(entries[10]!),
      'the audit log is already archived up to seq 11; an anchor at seq 10 would move it back',
    );
    await overtaken(
      { ...anchor, hash: entries[8]!.hash },
      `the audit log is archived up to seq 10 with another hash than ${anchor.hash}`,
    );
  });

  it('answers only the retained range mid-trim; a rerun, or a replica that starts, finishes the removal', async () => {
    const prefix = nextPrefix();
    const store = new MemoryCheckpointStore();
    const log = await open(prefix, { store });
    const entries = await appendEach(log, 1, 60);
    await expect.poll(() => store.checkpoints.at(-1)?.seq).toBe(60);
    const anchor = anchorOf(store.checkpoints.find((c) => c.seq === 40)!);
    const keys = log.keys;

    // A trim that crashed after its anchor and one batch: the rest is still stored and indexed.
    await recordAnchor(redis.admin(), keys, anchor, { requireTree: true, logger: silentLogger });
    expect(await removeArchivedBatch(redis.admin(), keys, 40, 15)).toBe(15);
    expect(await redis.admin().xlen(keys.stream)).toBe(45);

    const retained = entries.slice(40);
    expect(await log.retained()).toEqual({ from_seq: 41, anchor });
    await expectQueriesMatch(log, retained);
    expect(await log.get(entries[20]!.id)).toBeUndefined();
    expect(await log.byDecision('dec-3')).toEqual(retained.filter((e) => e.decision_id === 'dec-3'));
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 20, retained: { from_seq: 41 } });
    expect(await log.isVerified(39)).toBe(false);
    expect(await log.isVerified(45)).toBe(true);

    // Rerun with the recorded anchor: finishes the removal.
    await log.trim(anchor);
    await expectNothingArchived(keys, 40, 60);
    await expectQueriesMatch(log, retained);

    // Again, interrupted after its anchor only: a replica that opens finishes it by itself.
    const later = anchorOf(store.checkpoints.find((c) => c.seq === 50)!);
    await recordAnchor(redis.admin(), keys, later, { requireTree: true, logger: silentLogger });
    const { logged, logger } = recordingLogger();
    const replica = await open(prefix, { logger });
    await expect.poll(() => redis.admin().xlen(keys.stream)).toBe(10);
    await expectNothingArchived(keys, 50, 60);
    expect(logged).toEqual([
      { level: 'info', details: { anchor_seq: 50 }, message: 'finishing an interrupted audit trim' },
    ]);
    await replica.trim(later);
    expect(await replica.verify()).toMatchObject({ ok: true, entries_checked: 10 });
  });

  /** A log of entries 1..count whose trim at `anchorSeq` stopped right after recording its anchor. */
  async function interruptedTrim(count: number, anchorSeq: number) {
    const prefix = nextPrefix();
    const log = await open(prefix);
    const entries = await appendEach(log, 1, count);
    const anchor = anchorAt(entries[anchorSeq - 1]!);
    await recordAnchor(redis.admin(), log.keys, anchor, { requireTree: true, logger: silentLogger });
    return { prefix, log, keys: log.keys, anchor };
  }

  it('a replica that starts finishes a removal interrupted at the anchor entry itself', async () => {
    const { prefix, keys } = await interruptedTrim(12, 10);
    await removeArchivedBatch(redis.admin(), keys, 10, 9);
    await open(prefix);
    await expect.poll(() => redis.admin().xlen(keys.stream)).toBe(2);
  });

  it('a replica that starts on a log never trimmed, trimmed, or archived whole has nothing to finish and logs nothing', async () => {
    const prefix = nextPrefix();
    const log = await open(prefix);
    const entries = await appendEach(log, 1, 12);
    for (const anchor of [undefined, anchorAt(entries[9]!), anchorAt(entries[11]!)]) {
      if (anchor) await log.trim(anchor);
      const { logged, logger } = recordingLogger();
      await (await open(prefix, { logger })).close();
      expect(logged).toEqual([]);
    }
  });

  it('a replica that cannot finish an interrupted trim says so', async () => {
    const { prefix, keys } = await interruptedTrim(12, 10);
    await redis.admin().set(keys.timeCeiling, 'not a sorted set');
    const { logged, logger } = recordingLogger();
    await open(prefix, { logger });
    await expect
      .poll(() => logged)
      .toContainEqual({
        level: 'warn',
        details: { err: expect.objectContaining({ message: expect.stringMatching(/^WRONGTYPE /) }) },
        message: 'an interrupted audit trim could not be finished; the next trim will',
      });
  });

  it('closing a replica stops the removal it was finishing; the next trim finishes it', async () => {
    const { prefix, log, keys, anchor } = await interruptedTrim(40, 30);
    await (await open(prefix, { trimBatchEntries: 1 })).close();
    expect(await redis.admin().xlen(keys.stream)).toBeGreaterThan(10);
    await log.trim(anchor);
    await expectNothingArchived(keys, 30, 40);
  });

  it('keeps every entry another replica appends during a trim; the chain verifies', async () => {
    const prefix = nextPrefix();
    const store = new MemoryCheckpointStore();
    const trimmer = await open(prefix, { store, trimBatchEntries: 10 });
    const writer = await open(prefix, { maxBatchEntries: 5 });
    const before = await Promise.all(Array.from({ length: 300 }, (_, i) => trimmer.append(eventFor(i + 1))));
    await expect.poll(() => store.checkpoints.some((c) => c.seq >= 200)).toBe(true);
    const checkpoint = (await trimmer.checkpoints()).find((c) => c.seq >= 200 && c.seq <= 300)!;

    const [during] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => writer.append(eventFor(1000 + i)))),
      trimmer.trim(anchorOf(checkpoint)),
    ]);

    const head = await writer.head();
    expect(head.seq).toBe(500);
    const all = [...before, ...during].sort((a, b) => a.seq - b.seq);
    const retained = all.filter((e) => e.seq > checkpoint.seq);
    for (const entry of during) expect(await writer.get(entry.id)).toEqual(entry);
    const page = await writer.query({ order: 'asc', limit: 1000 });
    expect(page.total).toBe(500 - checkpoint.seq);
    expect(page.entries).toEqual(retained);
    expect(await trimmer.verify()).toMatchObject({ ok: true, entries_checked: 500 - checkpoint.seq });
    await expectNothingArchived(trimmer.keys, checkpoint.seq, 500);
  });

  it('verifies the entries after an anchor between checkpoints: those before it name archived entries', async () => {
    const store = new MemoryCheckpointStore();
    const log = await open(nextPrefix(), { store });
    const entries = await appendEach(log, 1, 25);
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toEqual([10, 20]);
    await log.trim(anchorAt(entries[14]!));
    for (const seq of [16, 20, 25]) expect(await log.isVerified(seq), `seq ${seq}`).toBe(true);
  });

  it('archives the whole log: the stream is empty, and the chain goes on from the anchor', async () => {
    const prefix = nextPrefix();
    const log = await open(prefix);
    const entries = await appendEach(log, 1, 12);
    await log.trim(anchorAt(entries[11]!));
    expect(await log.query({ order: 'desc', limit: 5 })).toEqual({ entries: [], total: 0, next: null });
    expect(await log.query({ since: at(0), order: 'asc', limit: 5 })).toMatchObject({ total: 0 });
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 0, head: { seq: 12 } });
    await expectNothingArchived(log.keys, 12, 12);
    const more = await appendEach(log, 13, 20);
    expect(more[0]).toMatchObject({ seq: 13, previous_hash: entries[11]!.hash });
    await expectQueriesMatch(log, more);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 8 });
    expect(await log.isVerified(15)).toBe(true);
  });

  it('removes archived stream items that hold no entry (a tampered stream)', async () => {
    const log = await open(nextPrefix(), { trimBatchEntries: 2 });
    const entries = await appendEach(log, 1, 12);
    await rewriteStream(redis.admin(), log.keys, (id, fields) => [
      id,
      parseInt(id, 10) <= 4 ? ['note', 'x'] : fields,
    ]);
    await log.trim(anchorAt(entries[9]!));
    expect((await redis.admin().xrange(log.keys.stream, '-', '+')).map(([id]) => id)).toEqual([
      '11-0',
      '12-0',
    ]);
  });

  it('removes the time floor records of archived entries dated before 1970 too', async () => {
    const log = await open(nextPrefix());
    const before1970 = (n: number) =>
      decisionEvent(n, { timestamp: new Date(Date.UTC(1969, 11, 31, 23, 59, 40 + n)).toISOString() });
    const entries = await appendEach(log, 1, 12, before1970);
    await log.trim(anchorAt(entries[9]!));
    await expectNothingArchived(log.keys, 10, 12);
  });

  it('fails a trim when Redis refuses a step of the removal', async () => {
    const log = await open(nextPrefix());
    const entries = await appendEach(log, 1, 12);
    await redis.admin().set(log.keys.timeCeiling, 'not a sorted set');
    await expect(log.trim(anchorAt(entries[9]!))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit trim could not reach Redis',
      cause: { message: expect.stringMatching(/^WRONGTYPE /) },
    });
  });

  it('queries agree with a plain filter of the retained entries for any timestamps, anchor and progress', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 2, maxLength: 20 }),
        fc.nat(),
        // Batches of the removal done before the queries (a large number: all of them).
        fc.integer({ min: 0, max: 6 }),
        // Each filter present half the time, so every plan of the query script comes up.
        fc
          .record({
            actor_id: half(fc.constantFrom('agent-0', 'agent-1')),
            capability: half(fc.constantFrom('db.read', 'db.write')),
            since: half(fc.integer({ min: 0, max: 15 }).map(at)),
            until: half(fc.integer({ min: 0, max: 15 }).map(at)),
          })
          .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined))),
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.integer({ min: 1, max: 5 }),
        async (seconds, anchorPick, batches, filters, order, limit) => {
          const log = await open(nextPrefix());
          const entries: AuditEntry[] = [];
          for (const [n, second] of seconds.entries()) {
            entries.push(await log.append(decisionEvent(n, { timestamp: at(second) })));
          }
          const anchorSeq = 1 + (anchorPick % entries.length);
          await recordAnchor(redis.admin(), log.keys, anchorAt(entries[anchorSeq - 1]!), {
            requireTree: true,
            logger: silentLogger,
          });
          for (let i = 0; i < batches; i += 1)
            await removeArchivedBatch(redis.admin(), log.keys, anchorSeq, 3);
          await expectPages(
            log,
            { ...filters, order, limit },
            entries.filter((e) => e.seq > anchorSeq),
          );
          await log.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});
