import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import type { AuditLogger } from '../../src/audit/audit-logger.js';
import { recordingLogger } from '../../src/audit/file/test-fixtures.js';
import { naiveRoot, referenceLeafInput } from '../../src/audit/merkle/test-naive-tree.js';
import { leafHash } from '../../src/audit/merkle/tree-hash.js';
import { verifyConsistency } from '../../src/audit/merkle/verify-consistency.js';
import { verifyInclusion } from '../../src/audit/merkle/verify-inclusion.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { catchUpRedisTree } from '../../src/audit/redis/tree-catch-up.js';
import { decisionEvent } from './support/events.js';
import { streamEntries } from './support/stream.js';
import { useRedisSuite } from './support/redis-suite.js';
import { resealed, rewriteItem } from './support/tampering.js';

describe('Redis audit log: the Merkle tree beside the chain', () => {
  const redis = useRedisSuite();
  let counter = 0;

  async function open(
    prefix: string,
    options: { maxBatchEntries?: number; withoutTree?: boolean; logger?: AuditLogger } = {},
  ): Promise<RedisAuditLog> {
    return redis.track(await openRedisAuditLog({ redis: redis.url(), keyPrefix: prefix, ...options }));
  }

  /** A log of entries 1..count whose tree holds the first `hashed`: a writer without the tree stored the rest. */
  async function treeBehind(hashed: number, count: number): Promise<RedisAuditKeys> {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const withTree = await open(prefix);
    for (let n = 1; n <= hashed; n++) await withTree.append(decisionEvent(n));
    await withTree.close();
    const withoutTree = await open(prefix, { withoutTree: true });
    for (let n = hashed + 1; n <= count; n++) await withoutTree.append(decisionEvent(n));
    await withoutTree.close();
    return withTree.keys;
  }

  /** A replica opened now catches the tree up as it starts (closing waits for that): the tree then, and what it logged. */
  async function catchUp(keys: RedisAuditKeys) {
    const { logged, logger } = recordingLogger();
    await (await openRedisAuditLog({ redis: redis.url(), keyPrefix: keys.prefix, logger })).close();
    return { tree: (await open(keys.prefix)).tree(), logged };
  }

  it('grows with the chain under concurrent writers: one tree, the naive root of the stored entries', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const [a, b] = [await open(prefix, { maxBatchEntries: 7 }), await open(prefix, { maxBatchEntries: 5 })];
    await Promise.all([
      ...Array.from({ length: 150 }, (_, i) => a.append(decisionEvent(i))),
      ...Array.from({ length: 150 }, (_, i) => b.append(decisionEvent(1000 + i))),
    ]);
    // Batches stored while a writer did not know the frontier are hashed in by the catch-up.
    await Promise.all([a.catchUpTree(), b.catchUpTree()]);
    const tree = a.tree();
    expect(await tree.size()).toBe(300);
    const entries = await streamEntries(redis.admin(), a.keys);
    const leaves = entries.map(referenceLeafInput);
    for (const size of [1, 99, 256, 300]) {
      expect((await tree.root(size)).equals(naiveRoot(leaves.slice(0, size))), `size ${size}`).toBe(true);
    }
    const root = await tree.root(300);
    for (const entry of entries.filter((_, i) => i % 17 === 0)) {
      const proof = await b.tree().inclusionProof(entry.seq - 1, 300);
      expect(() =>
        verifyInclusion(entry.seq - 1, 300, leafHash(referenceLeafInput(entry)), proof, root),
      ).not.toThrow();
    }
    const consistency = await tree.consistencyProof(99, 300);
    const older = await tree.root(99);
    expect(() => verifyConsistency(99, 300, consistency, older, root)).not.toThrow();
  });

  it('keeps level with the chain when writers race: a lost race is told the frontier, no tree read, no catch-up', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const writers = await Promise.all([1, 2, 3].map(() => open(prefix, { maxBatchEntries: 4 })));
    // Every writer starts at the same head; from there on they race.
    await Promise.all(writers.map((w, n) => w.append(decisionEvent(n))));
    await redis.admin().config('RESETSTAT');
    await Promise.all(
      writers.flatMap((w, n) => Array.from({ length: 60 }, (_, i) => w.append(decisionEvent(100 * n + i)))),
    );
    const stats = await redis.admin().info('commandstats');
    // Tree nodes are read (GETRANGE) only for a frontier read or a catch-up.
    expect(stats).not.toMatch(/cmdstat_getrange:/);
    expect(Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1])).toBeGreaterThan(0);
    const head = await writers[0]!.head();
    expect(head.seq).toBe(183);
    expect(await writers[0]!.tree().size()).toBe(183);
    const leaves = (await streamEntries(redis.admin(), writers[0]!.keys)).map(referenceLeafInput);
    expect((await writers[1]!.tree().root(183)).equals(naiveRoot(leaves))).toBe(true);
  });

  it('hashes in a log that is older than the tree, while appends go on', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const keys = new RedisAuditKeys(prefix);
    const first = await open(prefix);
    for (let i = 0; i < 40; i++) await first.append(decisionEvent(i));
    await first.close();
    // A log written before the tree existed: no records, no tree size in the head.
    await redis.admin().del(keys.treeChunk(0));
    await redis.admin().hdel(keys.head, 'tree');
    const second = await open(prefix);
    await Promise.all(Array.from({ length: 25 }, (_, i) => second.append(decisionEvent(100 + i))));
    await second.catchUpTree();
    const leaves = (await streamEntries(redis.admin(), keys)).map(referenceLeafInput);
    expect(leaves).toHaveLength(65);
    expect(await second.tree().size()).toBe(65);
    expect((await second.tree().root(65)).equals(naiveRoot(leaves))).toBe(true);
  });

  it('hashes in what a writer without the tree stored, from where the tree stopped', async () => {
    const keys = await treeBehind(5, 12);
    const { tree, logged } = await catchUp(keys);
    expect(await tree.size()).toBe(12);
    expect(logged).toEqual([]);
    const leaves = (await streamEntries(redis.admin(), keys)).map(referenceLeafInput);
    expect((await tree.root(12)).equals(naiveRoot(leaves))).toBe(true);
  });

  it('says that the tree records are missing, and leaves the tree as it is', async () => {
    const keys = await treeBehind(5, 12);
    await redis.admin().del(keys.treeChunk(0));
    const { tree, logged } = await catchUp(keys);
    expect(await tree.size()).toBe(5);
    expect(logged).toEqual([
      {
        level: 'error',
        details: { tree: 5 },
        message: 'audit tree records are missing; the tree cannot grow until it is rebuilt',
      },
    ]);
  });

  it('looks again when another replica grew the tree between its reads, and logs nothing', async () => {
    const keys = await treeBehind(5, 12);
    const own = new Redis(redis.url());
    onTestFinished(() => own.disconnect());
    await own.ping();
    const { logger, logged } = recordingLogger();
    // The head is read first; the frontier's read then waits behind a BLPOP on the same connection.
    const running = catchUpRedisTree(own, keys, logger);
    const hold = `hold-tree-${counter}`;
    const held = own.blpop(hold, 0);
    await catchUpRedisTree(redis.admin(), keys, recordingLogger().logger);
    await redis.admin().lpush(hold, 'go');
    await held;
    await running;
    expect(logged).toEqual([]);
    expect(await redis.admin().hget(keys.head, 'tree')).toBe('12');
  });

  it('logs a catch-up that Redis refuses', async () => {
    const keys = await treeBehind(5, 12);
    await redis.admin().multi().del(keys.treeChunk(0)).hset(keys.treeChunk(0), 'not', 'records').exec();
    const { logged } = await catchUp(keys);
    expect(logged).toContainEqual({
      level: 'warn',
      details: { err: expect.objectContaining({ message: expect.stringMatching(/^WRONGTYPE /) }) },
      message: 'audit tree catch-up failed; retried with the next batch',
    });
  });

  it('a writer that finds the tree behind the chain hashes the rest in by itself', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const writer = await open(prefix);
    const withoutTree = await open(prefix, { withoutTree: true });
    for (let n = 1; n <= 5; n++) await withoutTree.append(decisionEvent(n));
    await writer.append(decisionEvent(6));
    await expect.poll(() => writer.tree().size()).toBe(6);
  });

  const breaks = [
    {
      what: 'an entry whose own hash does not hold (edited in the stream)',
      hashed: 0,
      seq: 7,
      change: (entry: AuditEntry) => ['entry', JSON.stringify({ ...entry, risk_score: 0 })],
      stopsAt: 7,
    },
    {
      what: 'an entry that does not link to the one before (edited and sealed anew)',
      hashed: 5,
      seq: 8,
      change: (entry: AuditEntry) => ['entry', JSON.stringify(resealed(entry, { risk_score: 0 }))],
      stopsAt: 9,
    },
    {
      what: 'a stream item that is not an entry',
      hashed: 0,
      seq: 7,
      change: () => ['entry', '{"seq":'],
      stopsAt: 7,
    },
    {
      what: 'a stream item that holds no entry',
      hashed: 0,
      seq: 7,
      change: () => ['note', 'gone'],
      stopsAt: 7,
    },
    {
      what: 'entries after a gap where the log begins',
      hashed: 0,
      seq: 1,
      change: () => undefined,
      stopsAt: 1,
    },
    {
      what: "entries after the tree's last leaf, gone from the stream (their link cannot be checked)",
      hashed: 5,
      seq: 5,
      change: () => undefined,
      stopsAt: 6,
    },
  ];
  for (const { what, hashed, seq, change, stopsAt } of breaks) {
    it(`never hashes in ${what}: the tree stops before it and says where`, async () => {
      const keys = await treeBehind(hashed, 12);
      await rewriteItem(redis.admin(), keys, seq, change);
      const { tree, logged } = await catchUp(keys);
      expect(await tree.size()).toBe(stopsAt - 1);
      expect(logged).toContainEqual({
        level: 'error',
        details: { seq: stopsAt },
        message:
          'audit tree catch-up stops: the entry at this seq is missing or does not hash to its own hash',
      });
    });
  }

  it('an entry altered in the stream after it was hashed in no longer matches its proof', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const log = await open(prefix);
    const entries: AuditEntry[] = [];
    for (let i = 0; i < 10; i++) entries.push(await log.append(decisionEvent(i)));
    const root = await log.tree().root(10);
    const proof = await log.tree().inclusionProof(3, 10);
    expect(() =>
      verifyInclusion(3, 10, leafHash(referenceLeafInput(entries[3]!)), proof, root),
    ).not.toThrow();
    const altered = { ...entries[3]!, outcome: 'ALLOW' as const, data: { n: 99 } };
    expect(() => verifyInclusion(3, 10, leafHash(referenceLeafInput(altered)), proof, root)).toThrow();
  });
});
