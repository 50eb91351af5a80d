import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { AuditEntry, AuditEventInput } from '../../src/audit/audit-log.js';
import type { SealedEntry } from '../../src/audit/chain.js';
import { naiveRoot, referenceLeafInput } from '../../src/audit/merkle/test-naive-tree.js';
import type { ChainAppenderSettings } from '../../src/audit/redis/chain-appender.js';
import { AuditAppendInDoubtError, openRedisAuditLog, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { RedisTimeoutError } from '../../src/audit/redis/timeout.js';
import { AuditUnavailableError, randomUuid } from '../../src/model/index.js';
import { openAppender } from './support/appender.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';
import { leaseToAnotherWriter, redisNowMs, streamEntries } from './support/stream.js';

/** Calls on a writer's connection held at Redis: every call sent before is answered, none after. */
interface Hold {
  /** Resolves once the replies to every call sent before the hold have been read. */
  answered: Promise<unknown>;
  /** Lets Redis run the held calls. */
  release: () => Promise<void>;
}

describe('Redis chain appender: replies that do not store a batch', () => {
  const redis = useRedisSuite();
  let chains = 0;

  const newPrefix = () => `races${(chains += 1)}:{audit}`;

  /**
   * A ChainAppender on its own connection (see openAppender) that records each batch it
   * sends, and can hold its connection at Redis right behind its next script call: a
   * BLPOP nobody pushes to blocks the calls sent after it (other clients go on), so the
   * replies before the hold are read while the calls after it wait.
   */
  async function openWriter(prefix: string, settings: Partial<ChainAppenderSettings> = {}) {
    const sent: SealedEntry[][] = [];
    let holdNext: (() => void) | undefined;
    const writer = await openAppender(redis.url(), {
      keyPrefix: prefix,
      maxBatchEntries: 1,
      ...settings,
      onSealed: (batch) => {
        sent.push([...batch]);
        const hold = holdNext;
        holdNext = undefined;
        // Sent once the call sealed now is written: the script call is sent right after this returns.
        if (hold) queueMicrotask(hold);
      },
    });
    /** A hold, placed by `start` on the writer's connection. */
    const hold = (): Hold & { start: () => void } => {
      const key = `hold-${randomUuid()}`;
      let answer: (value: unknown) => void = () => undefined;
      const answered = new Promise((resolve) => (answer = resolve));
      let blocked: Promise<unknown> = Promise.resolve();
      return {
        answered,
        start: () => {
          void writer.redis.ping().then(answer, answer);
          blocked = writer.redis.blpop(key, 0).catch(() => undefined);
        },
        release: async () => {
          await redis.admin().lpush(key, 'go');
          await blocked;
        },
      };
    };
    return {
      ...writer,
      /** Holds the connection right behind the next script call this writer sends. */
      holdAfterNextCall: (): Hold => {
        const next = hold();
        holdNext = next.start;
        return next;
      },
      /** Holds the connection behind the calls sent so far. */
      holdNow: (): Hold => {
        const now = hold();
        now.start();
        return now;
      },
      /** The seqs of each batch as sent: the head each was sealed on, plus one on. */
      sentSeqs: () => sent.map((batch) => batch.map((one) => one.entry.seq)),
    };
  }

  const ns = (entries: readonly AuditEntry[]) => entries.map((e) => (e.data as { n: number }).n);

  /** What a failover to a replica that has only what the chain holds now would bring back. */
  async function snapshot(keys: RedisAuditKeys): Promise<() => Promise<void>> {
    const admin = redis.admin();
    const names = await admin.keys(`${keys.prefix}:*`);
    const dumps = await Promise.all(names.map(async (name) => [name, await admin.dumpBuffer(name)] as const));
    return async () => {
      const now = await admin.keys(`${keys.prefix}:*`);
      if (now.length > 0) await admin.del(...now);
      for (const [name, dump] of dumps) if (dump) await admin.restore(name, 0, dump);
    };
  }

  /**
   * Resolves after the I/O callbacks now running and everything they set off without a
   * timer: a step that waits for a timer has not run yet.
   */
  const beforeAnyTimer = () => new Promise((resolve) => setImmediate(resolve));

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const rejection = (append: Promise<AuditEntry>) =>
    append.then(
      () => undefined,
      (err: unknown) => err,
    );

  const event = (n: number): AuditEventInput => decisionEvent(n, { data: { n } });

  it('an error reply stores nothing and is not in doubt: the appends are refused, with the reply as cause', async () => {
    const w = await openWriter(newPrefix());
    await w.appender.append(event(1));
    // Someone made the ids hash a string: the script fails before its first write.
    await redis.admin().rename(w.keys.ids, `${w.keys.ids}:aside`);
    await redis.admin().set(w.keys.ids, 'not a hash');
    const refused = await rejection(w.appender.append(event(2)));
    expect(refused).toBeInstanceOf(AuditUnavailableError);
    expect(refused).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(refused).toMatchObject({
      message: 'Redis refused the audit append',
      cause: { name: 'ReplyError', message: expect.stringMatching(/^WRONGTYPE/) as unknown },
    });
    expect(w.appender.doubtfulCount).toBe(0);
    await redis.admin().del(w.keys.ids);
    await redis.admin().rename(`${w.keys.ids}:aside`, w.keys.ids);
    expect((await w.appender.append(event(3))).seq).toBe(2);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([1, 3]);
    await w.close();
  });

  it('after an error reply, sends nothing new until the calls sealed behind it are back, then re-seals them on the head', async () => {
    // maxAttempts 1: b's conflict reply comes from a's failure, not from a race it lost.
    const w = await openWriter(newPrefix(), { maxBatchesInFlight: 2, maxAttempts: 1 });
    await w.appender.append(event(0));
    await redis.admin().rename(w.keys.ids, `${w.keys.ids}:aside`);
    await redis.admin().set(w.keys.ids, 'not a hash');
    const hold = w.holdAfterNextCall();
    // a is refused; b was sealed on a and sent behind the hold; c waits for a free slot.
    const [a, b, c] = [1, 2, 3].map((n) => w.appender.append(event(n)));
    expect(await rejection(a!)).toMatchObject({ message: 'Redis refused the audit append' });
    await hold.answered;
    await redis.admin().del(w.keys.ids);
    await redis.admin().rename(`${w.keys.ids}:aside`, w.keys.ids);
    await hold.release();
    expect((await b!).seq).toBe(2);
    expect((await c!).seq).toBe(3);
    // c was not sent on b's predicted head, which could not be stored: only once b was back.
    expect(w.sentSeqs()).toEqual([[1], [2], [3], [2], [3]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([0, 2, 3]);
    await w.close();
  });

  it('after a lost race, sends nothing until the calls sealed behind it are back, so they lose it once', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix, { maxBatchesInFlight: 2, maxAttempts: 2 });
    const other = await openWriter(prefix);
    await w.appender.append(event(0));
    await other.appender.append(event(100));
    const hold = w.holdAfterNextCall();
    const [a, b] = [1, 2].map((n) => w.appender.append(event(n)));
    // a's call lost the race and is answered; b's, sealed on a, waits behind the hold.
    await hold.answered;
    await hold.release();
    // a lost one race, to the other writer; b was sealed on a, so its conflict is no race lost.
    expect((await a!).seq).toBe(3);
    expect((await b!).seq).toBe(4);
    expect(w.sentSeqs()).toEqual([[1], [2], [3], [3], [4]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([0, 100, 1, 2]);
    await Promise.all([w.close(), other.close()]);
  });

  it('batches that lost a race are sent again in the order they were appended', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix, { maxBatchesInFlight: 2 });
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    const entries = await Promise.all([1, 2].map((n) => w.appender.append(event(n))));
    expect(entries.map((e) => e.seq)).toEqual([2, 3]);
    expect(w.sentSeqs()).toEqual([[1], [2], [2], [3]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([100, 1, 2]);
    await Promise.all([w.close(), other.close()]);
  });

  it('rejects a batch once it lost the race maxAttempts times, and the next append goes on the head it was told', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix, { maxAttempts: 1 });
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    const lost = await rejection(w.appender.append(event(1)));
    expect(lost).toBeInstanceOf(AuditUnavailableError);
    expect(lost).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(lost).toMatchObject({ message: 'audit append lost the race to other writers 1 times' });
    expect((await w.appender.append(event(2))).seq).toBe(2);
    // Another writer moved the head forward: that is no rollback.
    expect(w.rollbacks).toEqual([]);
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([100, 2]);
    await Promise.all([w.close(), other.close()]);
  });

  it("waits out another writer's lease without counting a lost race and without sealing again: it probes", async () => {
    const w = await openWriter(newPrefix(), { maxAttempts: 1 });
    await leaseToAnotherWriter(redis.admin(), w.keys, 500);
    const entry = await w.appender.append(event(1));
    expect(entry.seq).toBe(1);
    // Refused once, then sent again after the probe that took the lease: sealed twice.
    expect(w.sentSeqs()).toEqual([[1], [1]]);
    expect(w.stored).toEqual([[entry]]);
    await w.close();
  });

  it('answers a batch whose first entry is stored already with the stored entries, and stores nothing again', async () => {
    const prefix = newPrefix();
    const first = await openWriter(prefix, { newId: () => 'entry-1' });
    const stored = await first.appender.append(event(1));
    // The same append sent again, by a writer that has not seen it stored: same id, same event.
    const ids = ['entry-1', 'entry-2'];
    const again = await openWriter(prefix, { newId: () => ids.shift()! });
    expect(await again.appender.append(event(1))).toEqual(stored);
    expect(again.stored).toEqual([[stored]]);
    expect(await streamEntries(redis.admin(), again.keys)).toEqual([stored]);
    expect((await again.appender.append(event(2))).seq).toBe(2);
    await Promise.all([first.close(), again.close()]);
  });

  it('refuses to append when the head is missing while the stream has entries', async () => {
    const w = await openWriter(newPrefix());
    await w.appender.append(event(1));
    await redis.admin().del(w.keys.head);
    const refused = await rejection(w.appender.append(event(2)));
    expect(refused).toBeInstanceOf(AuditUnavailableError);
    expect(refused).toMatchObject({
      message: 'audit chain head is missing while the stream has entries; refusing to fork',
    });
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([1]);
    await w.close();
  });

  it('reports a head that went back under it (entries it stored are gone), and appends on what Redis holds', async () => {
    const w = await openWriter(newPrefix());
    const one = await w.appender.append(event(1));
    const failover = await snapshot(w.keys);
    const two = await w.appender.append(event(2));
    await failover();
    const three = await w.appender.append(event(3));
    expect(w.rollbacks).toEqual([{ known: { seq: 2, hash: two.hash }, found: { seq: 1, hash: one.hash } }]);
    expect(three.seq).toBe(2);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([1, 3]);
    await w.close();
  });

  it('reports a head that forked at the same seq (another entry took the place of its own)', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix);
    await w.appender.append(event(1));
    const failover = await snapshot(w.keys);
    const two = await w.appender.append(event(2));
    await failover();
    const other = await openWriter(prefix);
    const forked = await other.appender.append(event(100));
    expect(forked.seq).toBe(2);
    const three = await w.appender.append(event(3));
    expect(w.rollbacks).toEqual([
      { known: { seq: 2, hash: two.hash }, found: { seq: 2, hash: forked.hash } },
    ]);
    expect(three.seq).toBe(3);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([1, 100, 3]);
    await Promise.all([w.close(), other.close()]);
  });

  it('asks for a tree catch-up when a batch was stored while the tree lags the chain, and only then', async () => {
    const w = await openWriter(newPrefix());
    await w.appender.append(event(1));
    expect(w.treeBehindCount()).toBe(0);
    // The tree forgets its leaf, as for a log older than the tree.
    await redis.admin().hset(w.keys.head, 'tree', '0', 'frontier', '');
    await w.appender.append(event(2));
    expect(w.treeBehindCount()).toBe(1);
    await w.close();
  });

  it("after a lost race, takes the tree's frontier from the reply only when the tree is level with the head", async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix);
    const other = await openWriter(prefix);
    await other.appender.append(event(1));
    const frontierAt1 = (await redis.admin().hget(w.keys.head, 'frontier'))!;
    await other.appender.append(event(2));
    const frontierAt2 = (await redis.admin().hget(w.keys.head, 'frontier'))!;
    // The tree lags one leaf behind the head when w loses its race.
    await redis.admin().hset(w.keys.head, 'tree', '1', 'frontier', frontierAt1);
    const hold = w.holdAfterNextCall();
    const three = w.appender.append(event(3));
    await hold.answered;
    // A catch-up brings the tree level before w sends again.
    await redis.admin().hset(w.keys.head, 'tree', '2', 'frontier', frontierAt2);
    await hold.release();
    expect((await three).seq).toBe(3);
    expect((await w.appender.append(event(4))).seq).toBe(4);
    const log = redis.track(await openRedisAuditLog({ redis: redis.url(), keyPrefix: prefix }));
    const leaves = (await streamEntries(redis.admin(), w.keys)).map(referenceLeafInput);
    expect(await log.tree().size()).toBe(4);
    expect((await log.tree().root(4)).equals(naiveRoot(leaves))).toBe(true);
    await Promise.all([w.close(), other.close()]);
  });

  it('a probe that gets no answer fails the append as unavailable, with the time-out as cause', async () => {
    const w = await openWriter(newPrefix(), { appendTimeoutMs: 1500 });
    await leaseToAnotherWriter(redis.admin(), w.keys, 200);
    const hold = w.holdAfterNextCall();
    const failed = await rejection(w.appender.append(event(1)));
    expect(failed).toBeInstanceOf(AuditUnavailableError);
    expect(failed).toMatchObject({ message: 'audit append failed' });
    const cause = (failed as Error).cause;
    expect(cause).toBeInstanceOf(RedisTimeoutError);
    expect((cause as Error).message).toMatch(/^audit append probe did not answer within \d+ ms$/);
    await hold.release();
    expect(await streamEntries(redis.admin(), w.keys)).toEqual([]);
    await w.close();
  });

  it('a batch whose bound ran out while it waited to be sent again is rejected without being sent', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix, { maxBatchesInFlight: 2, appendTimeoutMs: 500, settleTimeoutMs: 300 });
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    const hold = w.holdAfterNextCall();
    // a loses the race; b, sealed on a, gets no answer in time and cannot be settled.
    const [a, b] = [1, 2].map((n) => rejection(w.appender.append(event(n))));
    expect(await b).toBeInstanceOf(AuditAppendInDoubtError);
    expect(await a).toBeInstanceOf(AuditUnavailableError);
    expect(await a).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(await a).toMatchObject({ message: 'audit append timed out after 500 ms' });
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    await hold.release();
    expect((await w.appender.append(event(3))).seq).toBe(2);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([100, 3]);
    await Promise.all([w.close(), other.close()]);
  });

  it('a bound with no time left is spent: the batch is not sent', async () => {
    // The host clock stands still, and moves only when the test says.
    let clock = Date.now();
    const frozen = vi.spyOn(Date, 'now').mockImplementation(() => clock);
    onTestFinished(() => frozen.mockRestore());
    const prefix = newPrefix();
    const w = await openWriter(prefix, { maxBatchesInFlight: 2, appendTimeoutMs: 500, settleTimeoutMs: 300 });
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    const hold = w.holdAfterNextCall();
    const deadline = clock + 500;
    // a loses the race; b, sealed on a, gets no answer in time and cannot be settled.
    const [a, b] = [1, 2].map((n) => rejection(w.appender.append(event(n))));
    expect(await b).toBeInstanceOf(AuditAppendInDoubtError);
    // a is sent again once b is out of the way: with exactly no time left.
    clock = deadline;
    expect(await a).toMatchObject({ message: 'audit append timed out after 500 ms' });
    expect(await a).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    await hold.release();
    await Promise.all([w.close(), other.close()]);
  });

  it('fails fast, without sending, when its connection is closed', async () => {
    const w = await openWriter(newPrefix());
    await w.appender.append(event(1));
    const ended = new Promise((resolve) => w.redis.once('end', resolve));
    w.redis.disconnect();
    await ended;
    const refused = await rejection(w.appender.append(event(2)));
    expect(refused).toBeInstanceOf(AuditUnavailableError);
    expect(refused).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(refused).toMatchObject({ message: 'Redis is not connected (end)' });
    expect(w.sentSeqs()).toEqual([[1]]);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([1]);
  });

  it('a batch that lost once is sent again at once, one that lost twice backs off first, and one whose reply gave it the lease goes at once', async () => {
    const prefix = newPrefix();
    const w = await openWriter(prefix);
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    // Each attempt of w is answered while the next waits behind a hold; the other writer
    // appends in between, so every attempt loses the race.
    const first = w.holdAfterNextCall();
    const appended = w.appender.append(event(1));
    await first.answered;
    // Lost once: the reply carries the new head, so it is sealed again at once.
    await beforeAnyTimer();
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    await other.appender.append(event(101));
    const second = w.holdNow();
    await first.release();
    await second.answered;
    // Lost twice, no lease: it waits (a random back-off) before sealing again.
    await beforeAnyTimer();
    expect(w.sentSeqs()).toEqual([[1], [2]]);
    await expect.poll(() => w.sentSeqs().length, { timeout: 10_000 }).toBe(3);
    await other.appender.append(event(102));
    const third = w.holdNow();
    await second.release();
    await third.answered;
    // Lost a third time and took the lease (LEASE_MS only): sealed again at once.
    await beforeAnyTimer();
    expect(w.sentSeqs()).toEqual([[1], [2], [3], [4]]);
    await third.release();
    expect((await appended).seq).toBe(4);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([100, 101, 102, 1]);
    await Promise.all([w.close(), other.close()]);
  });

  it("a writer refused during another's lease is next since it was first refused, in Redis's clock", async () => {
    // This host's clock runs 5 s ahead of Redis's; the appender measures the offset when it opens.
    const hostNow = Date.now.bind(Date);
    const skewed = vi.spyOn(Date, 'now').mockImplementation(() => hostNow() + 5000);
    onTestFinished(() => skewed.mockRestore());
    const prefix = newPrefix();
    const w = await openWriter(prefix);
    const other = await openWriter(prefix);
    await other.appender.append(event(100));
    const hold = w.holdAfterNextCall();
    const appended = w.appender.append(event(1));
    // Its first attempt lost the race: refused from then on. The next waits behind the hold.
    await hold.answered;
    const refusedBy = await redisNowMs(redis.admin());
    await redis.admin().hset(w.keys.head, 'lease', 'another-writer', 'lease_until', refusedBy + 800);
    await sleep(300);
    const sentAfter = await redisNowMs(redis.admin());
    await hold.release();
    // Refused again, now by the lease: the head names it next, waiting since its first refusal.
    const [next, since] = await redis.admin().hmget(w.keys.head, 'next', 'next_since');
    expect(next).not.toBeNull();
    expect(Number(since)).toBeLessThan(sentAfter);
    expect((await appended).seq).toBe(2);
    expect(ns(await streamEntries(redis.admin(), w.keys))).toEqual([100, 1]);
    await Promise.all([w.close(), other.close()]);
  });
});
