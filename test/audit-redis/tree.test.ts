import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { naiveRoot, referenceLeafInput } from '../../src/audit/merkle/test-naive-tree.js';
import { leafHash } from '../../src/audit/merkle/tree-hash.js';
import { verifyConsistency } from '../../src/audit/merkle/verify-consistency.js';
import { verifyInclusion } from '../../src/audit/merkle/verify-inclusion.js';
import { openRedisAuditLog, RedisAuditKeys, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

describe('Redis audit log: the Merkle tree beside the chain', () => {
  const redis = useRedisSuite();
  let counter = 0;

  async function open(prefix: string, options: { maxBatchEntries?: number } = {}): Promise<RedisAuditLog> {
    return redis.track(await openRedisAuditLog({ redis: redis.url(), keyPrefix: prefix, ...options }));
  }

  async function streamEntries(keys: RedisAuditKeys): Promise<AuditEntry[]> {
    const items = await redis.admin().xrange(keys.stream, '-', '+');
    return items.map(([, fields]) => JSON.parse(fields[1] as string) as AuditEntry);
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
    const entries = await streamEntries(a.keys);
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
    const leaves = (await streamEntries(writers[0]!.keys)).map(referenceLeafInput);
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
    const leaves = (await streamEntries(keys)).map(referenceLeafInput);
    expect(leaves).toHaveLength(65);
    expect(await second.tree().size()).toBe(65);
    expect((await second.tree().root(65)).equals(naiveRoot(leaves))).toBe(true);
  });

  it('never hashes in an entry whose own hash does not hold; the tree stops before it', async () => {
    counter += 1;
    const prefix = `tree${counter}:{audit}`;
    const keys = new RedisAuditKeys(prefix);
    const first = await open(prefix);
    for (let i = 0; i < 12; i++) await first.append(decisionEvent(i));
    await first.close();
    await redis.admin().del(keys.treeChunk(0));
    await redis.admin().hdel(keys.head, 'tree');
    // Entry 7 edited in the stream (DENY made ALLOW) before the tree was built.
    const items = await redis.admin().xrange(keys.stream, '-', '+');
    const rewrite = redis.admin().multi().del(keys.stream);
    for (const [id, fields] of items) {
      const entry = JSON.parse(fields[1] as string) as AuditEntry;
      rewrite.xadd(
        keys.stream,
        id,
        'entry',
        JSON.stringify(entry.seq === 7 ? { ...entry, outcome: 'ALLOW', risk_score: 0 } : entry),
      );
    }
    await rewrite.exec();
    const errors: string[] = [];
    const second = await openRedisAuditLog({
      redis: redis.url(),
      keyPrefix: prefix,
      logger: { info: () => undefined, warn: () => undefined, error: (_d, message) => errors.push(message) },
    });
    redis.track(second);
    await second.catchUpTree();
    expect(await second.tree().size()).toBe(6);
    expect(errors).toContain(
      'audit tree catch-up stops: the entry at this seq is missing or does not hash to its own hash',
    );
  });

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
