import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { type SealedEntry, sealForStorage } from '../../src/audit/chain.js';
import { recordingLogger } from '../../src/audit/file/test-fixtures.js';
import { openRedisAuditLog } from '../../src/audit/redis/index.js';
import { MAX_EXPECTED, StreamTail } from '../../src/audit/redis/stream-tail.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

/** `count` linked entries sealed as a replica seals them before storing, seq 1 on. */
function sealedRun(count: number): SealedEntry[] {
  const run: SealedEntry[] = [];
  for (let n = 1; n <= count; n++)
    run.push(sealForStorage(decisionEvent(n), `e-${n}`, run.at(-1)?.entry ?? null));
  return run;
}

describe('Redis audit log: the live feed', () => {
  const suite = useRedisSuite();

  /** A feed of `stream` from its start, what it hands on once listen() was called, and what it logs. */
  function feedOf(stream: string) {
    const { logged, logger } = recordingLogger();
    const tail = new StreamTail(
      () => new Redis(suite.url()),
      stream,
      logger,
      () => Promise.resolve('0-0'),
    );
    onTestFinished(() => tail.stop());
    const seen: AuditEntry[] = [];
    return {
      tail,
      seen,
      logged,
      listen: () => tail.subscribe((entry) => seen.push(entry)),
      /** Stores a sealed entry at its seq, as the replica that sealed it would. */
      store: (sealed: SealedEntry) =>
        suite.admin().xadd(stream, `${sealed.entry.seq}-0`, 'entry', sealed.stored),
    };
  }

  /** Connections to the test's Redis named `name` (CLIENT LIST lines). */
  async function clientsNamed(name: string): Promise<string[]> {
    const list = (await suite.admin().client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `));
  }

  it("hands on this replica's own entries as appended, and other replicas' as stored", async () => {
    const log = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: 'feed-own:{audit}' }));
    const other = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: 'feed-own:{audit}' }));
    const seen: AuditEntry[] = [];
    log.subscribe((entry) => seen.push(entry));
    const mine = await Promise.all([1, 2, 3].map((n) => log.append(decisionEvent(n))));
    const theirs = await other.append(decisionEvent(4));
    await expect.poll(() => seen.length).toBe(4);
    // The very objects append resolved with: the feed compared the bytes, it did not parse them.
    for (const [i, entry] of mine.entries()) expect(seen[i]).toBe(entry);
    expect(seen[3]).not.toBe(theirs);
    expect(seen[3]).toEqual(theirs);
    const stored = await log.query({ order: 'asc', limit: 10 });
    expect(seen).toEqual(stored.entries);
  });

  it('parses what is stored at a seq when it is not the entry this replica sealed for it (a lost race, a failover)', async () => {
    const feed = feedOf('feed-race:stream');
    feed.listen();
    const sealedHere = sealForStorage(decisionEvent(1), 'mine-1', null);
    const storedThere = sealForStorage(decisionEvent(2), 'theirs-1', null);
    feed.tail.expect([sealedHere]);
    await feed.store(storedThere);
    await expect.poll(() => feed.seen.length).toBe(1);
    expect(feed.seen[0]).toEqual(storedThere.entry);

    // The next seq as sealed here: handed on as it is.
    const next = sealForStorage(decisionEvent(3), 'mine-2', storedThere.entry);
    feed.tail.expect([next]);
    await feed.store(next);
    await expect.poll(() => feed.seen.length).toBe(2);
    expect(feed.seen[1]).toBe(next.entry);

    // Bytes that differ by one character at the expected seq are not the expected entry.
    const third = sealForStorage(decisionEvent(4), 'mine-3', next.entry);
    feed.tail.expect([third]);
    const altered = Buffer.from(third.stored);
    altered[altered.indexOf('"seq":3') + 6] = '4'.charCodeAt(0);
    await suite.admin().xadd('feed-race:stream', '3-0', 'entry', altered);
    await expect.poll(() => feed.seen.length).toBe(3);
    expect(feed.seen[2]).not.toBe(third.entry);
    expect(feed.seen[2]!.seq).toBe(4);
  });

  it('hands on an entry sealed ahead of what it has read as sealed: two batches in flight', async () => {
    const feed = feedOf('feed-ahead:stream');
    feed.listen();
    const [first, second] = sealedRun(2);
    feed.tail.expect([first!]);
    feed.tail.expect([second!]);
    await feed.store(first!);
    await expect.poll(() => feed.seen.length).toBe(1);
    await feed.store(second!);
    await expect.poll(() => feed.seen.length).toBe(2);
    expect(feed.seen[1]).toBe(second!.entry);
  });

  it('keeps no sealed entry while nobody listens: one sealed before the first subscriber is read from the stream', async () => {
    const feed = feedOf('feed-idle:stream');
    const [first] = sealedRun(1);
    feed.tail.expect([first!]);
    feed.listen();
    await feed.store(first!);
    await expect.poll(() => feed.seen.length).toBe(1);
    expect(feed.seen[0]).not.toBe(first!.entry);
    expect(feed.seen[0]).toEqual(first!.entry);
  });

  it(`keeps at most ${MAX_EXPECTED} sealed entries, dropping the oldest: the feed reads those from the stream`, async () => {
    const feed = feedOf('feed-bound:stream');
    feed.listen();
    const run = sealedRun(MAX_EXPECTED + 1);
    feed.tail.expect(run);
    await feed.store(run[0]!);
    await feed.store(run[1]!);
    await expect.poll(() => feed.seen.length).toBe(2);
    expect(feed.seen[0]).not.toBe(run[0]!.entry);
    expect(feed.seen[0]).toEqual(run[0]!.entry);
    expect(feed.seen[1]).toBe(run[1]!.entry);
  });

  it('logs a subscriber that throws, and still hands every entry to the others', async () => {
    const feed = feedOf('feed-throws:stream');
    const bug = new Error('subscriber bug');
    feed.tail.subscribe(() => {
      throw bug;
    });
    feed.listen();
    const [first, second] = sealedRun(2);
    await feed.store(first!);
    await feed.store(second!);
    await expect.poll(() => feed.seen.length).toBe(2);
    const warning = (seq: number) => ({
      level: 'warn',
      details: { err: bug, seq },
      message: 'audit subscriber threw; ignored',
    });
    expect(feed.logged).toEqual([warning(first!.entry.seq), warning(second!.entry.seq)]);
  });

  it('closes its connection once the last subscriber leaves, and logs nothing for it', async () => {
    const { logged, logger } = recordingLogger();
    const named = new Redis(suite.url(), { connectionName: 'feed-leave', lazyConnect: true });
    const log = suite.track(
      await openRedisAuditLog({ redis: named, keyPrefix: 'feed-leave:{audit}', logger }),
    );
    const unsubscribe = log.subscribe(() => undefined);
    // The feed's connection, blocked in its read, beside the log's own.
    await expect
      .poll(async () => (await clientsNamed('feed-leave')).filter((c) => /flags=b/.test(c)))
      .toHaveLength(1);
    unsubscribe();
    await expect.poll(async () => (await clientsNamed('feed-leave')).length).toBe(1);
    await log.close();
    expect(logged).toEqual([]);
  });

  it('logs a read that fails, and reads on once the stream can be read', async () => {
    const stream = 'feed-fails:stream';
    await suite.admin().set(stream, 'not a stream');
    const feed = feedOf(stream);
    feed.listen();
    await expect.poll(() => feed.logged.length).toBeGreaterThan(0);
    expect(feed.logged[0]).toMatchObject({
      level: 'warn',
      message: 'audit live feed could not read the stream; retrying',
    });
    expect(String((feed.logged[0]!.details as { err: unknown }).err)).toMatch(/WRONGTYPE/);
    await suite.admin().del(stream);
    const [first] = sealedRun(1);
    await feed.store(first!);
    await expect.poll(() => feed.seen, { timeout: 5000 }).toEqual([first!.entry]);
  });

  it('follows the stream across a Redis restart', async () => {
    const prefix = 'feed-restart:{audit}';
    const log = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: prefix }));
    const seen: AuditEntry[] = [];
    log.subscribe((entry) => seen.push(entry));
    await log.append(decisionEvent(1));
    await expect.poll(() => seen.length).toBe(1);
    // The feed's read is in flight when Redis goes.
    await suite.server().stop();
    await suite.server().restart();
    const other = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: prefix }));
    await other.append(decisionEvent(2));
    await expect.poll(() => seen.map((entry) => entry.seq), { timeout: 5000 }).toEqual([1, 2]);
  });
});
