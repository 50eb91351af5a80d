import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { APPEND_SCRIPT, SETTLE_SCRIPT } from '../../src/audit/redis/append-scripts.js';
import { AuditAppendInDoubtError } from '../../src/audit/redis/errors.js';
import { RedisAuditKeys } from '../../src/audit/redis/redis-keys.js';
import { withTimeout } from '../../src/audit/redis/timeout.js';
import { AuditUnavailableError, randomUuid } from '../../src/model/index.js';
import { openAppender } from './support/appender.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';
import { leaseToAnotherWriter, redisNowMs, streamEntries } from './support/stream.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** One turn of the event loop: whatever the appender does on promises alone has happened. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An append's answer, kept as it comes (no unhandled rejection while the test waits). */
function answerOf(append: Promise<AuditEntry>) {
  const state: { entry?: AuditEntry; error?: unknown; answered: boolean } = { answered: false };
  const done = append.then(
    (entry) => Object.assign(state, { entry, answered: true }),
    (error: unknown) => Object.assign(state, { error, answered: true }),
  );
  return Object.assign(state, { done });
}

const seqsOf = (batches: readonly (readonly { entry: AuditEntry }[])[]) =>
  batches.map((batch) => batch.map((one) => one.entry.seq));

describe('Redis audit chain appender: scheduling of batches', () => {
  const { url, server, admin } = useRedisSuite();

  /** Holds every script call (a writing command) until unpaused, at the latest after the test. */
  const pauseWrites = async () => {
    await admin().call('CLIENT', 'PAUSE', 60_000, 'WRITE');
    onTestFinished(async () => void (await admin().call('CLIENT', 'UNPAUSE')));
  };
  const unpause = () => admin().call('CLIENT', 'UNPAUSE');
  const open = async (settings: Parameters<typeof openAppender>[1] = {}) => {
    const opened = await openAppender(url(), settings);
    onTestFinished(() => opened.close());
    return opened;
  };

  beforeAll(async () => {
    // Loaded once, so that no script call of a test goes EVALSHA, NOSCRIPT, EVAL.
    await admin().script('LOAD', APPEND_SCRIPT);
    await admin().script('LOAD', SETTLE_SCRIPT);
  });

  it('sends an append at once while another batch waits for its reply, when a slot is free', async () => {
    const { appender, sealed } = await open({ maxBatchesInFlight: 2, appendTimeoutMs: 10_000 });
    await pauseWrites();
    const first = answerOf(appender.append(decisionEvent(1)));
    await expect.poll(() => sealed.length).toBe(1);
    const second = answerOf(appender.append(decisionEvent(2)));
    // Sealed on the head the first batch will leave, while the first is still held.
    await expect.poll(() => sealed.length, { timeout: 5000 }).toBe(2);
    expect(first.answered).toBe(false);
    await unpause();
    await Promise.all([first.done, second.done]);
    expect(seqsOf(sealed)).toEqual([[1], [2]]);
    expect([first.entry?.seq, second.entry?.seq]).toEqual([1, 2]);
  });

  it('with one slot, appends made while a batch is in flight wait for its reply and go together', async () => {
    const { appender, sealed, keys } = await open({ maxBatchesInFlight: 1, appendTimeoutMs: 10_000 });
    await pauseWrites();
    const first = answerOf(appender.append(decisionEvent(1)));
    await expect.poll(() => sealed.length).toBe(1);
    const later = [2, 3].map((n) => answerOf(appender.append(decisionEvent(n))));
    await turn();
    expect(sealed.length).toBe(1);
    await unpause();
    await Promise.all([first.done, ...later.map((a) => a.done)]);
    expect(seqsOf(sealed)).toEqual([[1], [2, 3]]);
    expect((await streamEntries(admin(), keys)).map((e) => e.decision_id)).toEqual([
      'dec-1',
      'dec-2',
      'dec-3',
    ]);
  });

  it('spreads the queued appends over the free slots', async () => {
    const { appender, sealed, stored } = await open({ maxBatchesInFlight: 3, maxBatchEntries: 100 });
    // The first goes alone; the six queued meanwhile are split over the two slots left.
    const entries = await Promise.all(
      Array.from({ length: 7 }, (_, n) => appender.append(decisionEvent(n + 1))),
    );
    expect(seqsOf(sealed)).toEqual([[1], [2, 3, 4], [5, 6, 7]]);
    expect(seqsOf(stored.map((batch) => batch.map((entry) => ({ entry }))))).toEqual(seqsOf(sealed));
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('keeps pipelining while the Merkle tree lags the chain: the frontier is read before the first batch only', async () => {
    const keyPrefix = `lagging-${randomUuid()}`;
    // A writer without tree records leaves the tree behind the chain.
    const old = await open({ keyPrefix, withoutTree: true });
    await old.appender.append(decisionEvent(0));
    const { appender, sealed, treeBehindCount } = await open({ keyPrefix, maxBatchesInFlight: 3 });
    const entries = await Promise.all(
      Array.from({ length: 7 }, (_, n) => appender.append(decisionEvent(n + 1))),
    );
    expect(seqsOf(sealed)).toEqual([[2], [3, 4, 5], [6, 7, 8]]);
    expect(entries.map((e) => e.seq)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(treeBehindCount()).toBe(3);
  });

  it('batches that lost a race are sealed again in the order they were made', async () => {
    const keyPrefix = `race-order-${randomUuid()}`;
    const { appender, sealed } = await open({ keyPrefix, maxBatchesInFlight: 2 });
    // Another writer moves the head: both batches in flight are sealed on a stale one.
    const other = await open({ keyPrefix });
    await other.appender.append(decisionEvent(0));
    const entries = await Promise.all([1, 2].map((n) => appender.append(decisionEvent(n))));
    expect(sealed.map((batch) => batch.map((s) => [s.entry.decision_id, s.entry.seq]))).toEqual([
      [['dec-1', 1]],
      [['dec-2', 2]],
      [['dec-1', 2]],
      [['dec-2', 3]],
    ]);
    expect(entries.map((e) => [e.decision_id, e.seq])).toEqual([
      ['dec-1', 2],
      ['dec-2', 3],
    ]);
  });

  it('an append whose bound ran out while queued is rejected as such; a doubtful batch is settled before the next one', async () => {
    const { appender, sealed, keys } = await open({
      maxBatchesInFlight: 1,
      appendTimeoutMs: 1000,
      settleTimeoutMs: 1000,
    });
    await pauseWrites();
    const held = answerOf(appender.append(decisionEvent(1)));
    await expect.poll(() => sealed.length).toBe(1);
    const queued = answerOf(appender.append(decisionEvent(2)));
    // The first batch gets no reply, nor does its settle call: in doubt. The second append
    // was still queued when its bound ran out: it is rejected without being sent.
    await withTimeout(appender.idle(), 10_000, 'idle');
    expect(held.error).toBeInstanceOf(AuditAppendInDoubtError);
    expect(held.error).toMatchObject({
      message: 'audit append got no reply and could not be settled; it may be stored',
    });
    expect(queued.error).toBeInstanceOf(AuditUnavailableError);
    expect(queued.error).toMatchObject({ message: 'audit append timed out while queued' });
    expect(seqsOf(sealed)).toEqual([[1]]);
    expect(appender.doubtfulCount).toBe(1);
    // Settling while Redis still holds writes fails: the batch stays in doubt.
    await appender.settleDoubtful(200);
    expect(appender.doubtfulCount).toBe(1);
    // The next append settles it first, waiting for Redis within its own bound.
    const next = answerOf(appender.append(decisionEvent(3)));
    await sleep(300);
    await unpause();
    await next.done;
    expect(next.entry?.seq).toBe(1);
    expect(appender.doubtfulCount).toBe(0);
    expect(await streamEntries(admin(), keys)).toEqual([next.entry]);
  });

  it('an append whose bound ends as its batch is formed is left out; the others in the batch go on', async () => {
    // The appender's clock, stopped, so that a bound can end exactly when a batch is formed.
    const start = Date.now();
    let clock = start;
    const stopped = vi.spyOn(Date, 'now').mockImplementation(() => clock);
    onTestFinished(() => stopped.mockRestore());
    const appendTimeoutMs = 5000;
    const storedBatches: (string | null)[][] = [];
    const { appender, sealed } = await open({
      maxBatchesInFlight: 1,
      appendTimeoutMs,
      // Once the first batch is stored (before the next is formed), the queued one's bound ends.
      onStored: (entries) => {
        storedBatches.push(entries.map((e) => e.decision_id));
        if (storedBatches.length === 1) clock = start + appendTimeoutMs;
      },
    });
    const first = answerOf(appender.append(decisionEvent(1)));
    const due = answerOf(appender.append(decisionEvent(2)));
    clock += 500;
    const later = answerOf(appender.append(decisionEvent(3)));
    await Promise.all([first.done, due.done, later.done]);
    expect(due.error).toMatchObject({ message: 'audit append timed out while queued' });
    expect(later.error).toBeUndefined();
    expect([first.entry?.seq, later.entry?.seq]).toEqual([1, 2]);
    expect(sealed.map((batch) => batch.map((s) => s.entry.decision_id))).toEqual([['dec-1'], ['dec-3']]);
    expect(storedBatches).toEqual([['dec-1'], ['dec-3']]);
  });

  it('a batch is bounded by its earliest append: it is not sent after that one timed out', async () => {
    const { appender, sealed, keys } = await open({
      maxBatchesInFlight: 1,
      appendTimeoutMs: 4000,
      settleTimeoutMs: 1000,
    });
    await pauseWrites();
    const held = answerOf(appender.append(decisionEvent(1)));
    await expect.poll(() => sealed.length).toBe(1);
    await sleep(2000);
    const earlier = answerOf(appender.append(decisionEvent(2)));
    await sleep(1500);
    const later = answerOf(appender.append(decisionEvent(3)));
    // The held batch is given up (in doubt); the two queued appends form the next batch,
    // which first waits to settle the doubtful one while Redis still holds writes.
    await held.done;
    expect(held.error).toBeInstanceOf(AuditAppendInDoubtError);
    // Redis answers again after the earlier append's bound, within the later one's.
    await sleep(1750);
    await unpause();
    await Promise.all([earlier.done, later.done]);
    expect(earlier.error).toBeInstanceOf(AuditUnavailableError);
    expect(later.error).toBeInstanceOf(AuditUnavailableError);
    expect(await streamEntries(admin(), keys)).toEqual([]);
  });

  it('sends nothing more while an attempt that got no reply is being settled', async () => {
    const { appender, sealed, keys } = await open({
      maxBatchesInFlight: 2,
      appendTimeoutMs: 2000,
      settleTimeoutMs: 10_000,
    });
    await pauseWrites();
    const lost = answerOf(appender.append(decisionEvent(1)));
    await expect.poll(() => sealed.length).toBe(1);
    // Its reply is overdue: the appender is settling it (the settle call waits too).
    await sleep(2500);
    const next = answerOf(appender.append(decisionEvent(2)));
    await turn();
    expect(sealed.length).toBe(1);
    await unpause();
    await Promise.all([lost.done, next.done]);
    expect(lost.error).toBeInstanceOf(AuditUnavailableError);
    expect(lost.error).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(lost.error).toMatchObject({
      message: 'audit append got no reply in time; the batch was cancelled',
    });
    // Sealed once, on the head the lost batch left: nothing was built on the lost one.
    expect(seqsOf(sealed)).toEqual([[1], [1]]);
    expect(await streamEntries(admin(), keys)).toEqual([next.entry]);
  });

  it('a lost connection rejects the append without sending it, after logging the unread tree frontier', async () => {
    const { appender, redis, sealed, logged } = await open();
    const ended = new Promise((resolve) => redis.once('end', resolve));
    redis.disconnect();
    await ended;
    await expect(appender.append(decisionEvent(1))).rejects.toMatchObject({
      name: 'AuditUnavailableError',
      message: 'Redis is not connected (end)',
    });
    expect(sealed).toEqual([]);
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { err: expect.objectContaining({ message: 'Connection is closed.' }) },
        message: 'audit tree frontier could not be read; appending without tree records',
      },
    ]);
  });

  it('a tree frontier read that Redis does not answer is logged as timed out', async () => {
    const { appender, logged } = await open({ appendTimeoutMs: 500 });
    server().pause();
    onTestFinished(() => server().resume());
    const append = answerOf(appender.append(decisionEvent(1)));
    await withTimeout(append.done, 10_000, 'the append');
    server().resume();
    expect(append.error).toBeInstanceOf(AuditUnavailableError);
    const warned = logged.find((line) => line.message.startsWith('audit tree frontier'));
    expect(warned?.message).toBe('audit tree frontier could not be read; appending without tree records');
    expect((warned?.details as { err: Error }).err.message).toMatch(
      /^audit tree frontier did not answer within \d+ ms$/,
    );
    await appender.idle();
  });

  it("waits out another writer's lease as told, probing without sealing again", async () => {
    const keys = new RedisAuditKeys(`lease-${randomUuid()}`);
    const { appender, sealed } = await open({ keyPrefix: keys.prefix, appendTimeoutMs: 10_000 });
    await leaseToAnotherWriter(admin(), keys, 1000);
    const append = answerOf(appender.append(decisionEvent(1)));
    // Refused ('busy'): the appender is recorded as next and waits.
    await expect.poll(() => admin().hget(keys.head, 'next'), { interval: 10 }).not.toBeNull();
    expect(sealed.length).toBe(1);
    // The other writer keeps its lease longer: the probe after the wait is refused as well.
    await admin().hset(keys.head, 'lease_until', (await redisNowMs(admin())) + 1500);
    await append.done;
    expect(append.entry?.seq).toBe(1);
    // Sealed twice only: once refused, once stored; the waits were probes.
    expect(seqsOf(sealed)).toEqual([[1], [1]]);
  });

  it("rejects within its bound when another writer's lease outlasts it", async () => {
    const keys = new RedisAuditKeys(`long-lease-${randomUuid()}`);
    const { appender } = await open({ keyPrefix: keys.prefix, appendTimeoutMs: 500 });
    const leaseUntil = await leaseToAnotherWriter(admin(), keys, 60_000);
    const append = answerOf(appender.append(decisionEvent(1)));
    await withTimeout(append.done, 10_000, 'the append');
    expect(append.error).toBeInstanceOf(AuditUnavailableError);
    expect(append.error).not.toBeInstanceOf(AuditAppendInDoubtError);
    expect(await redisNowMs(admin())).toBeLessThan(leaseUntil);
    expect(await streamEntries(admin(), keys)).toEqual([]);
  });

  it('a head that went missing while the appender waited refuses the append', async () => {
    const keys = new RedisAuditKeys(`headless-${randomUuid()}`);
    const { appender, sealed } = await open({ keyPrefix: keys.prefix, appendTimeoutMs: 10_000 });
    await appender.append(decisionEvent(1));
    await leaseToAnotherWriter(admin(), keys, 500);
    const append = answerOf(appender.append(decisionEvent(2)));
    await expect.poll(() => admin().hget(keys.head, 'next'), { interval: 10 }).not.toBeNull();
    await admin().hdel(keys.head, 'seq', 'hash');
    await append.done;
    expect(append.error).toMatchObject({
      name: 'AuditUnavailableError',
      message: 'audit chain head is missing while the stream has entries; refusing to fork',
    });
    // The probe after the wait got the refusal: nothing was sealed again.
    expect(seqsOf(sealed)).toEqual([[1], [2]]);
    expect((await streamEntries(admin(), keys)).map((e) => e.seq)).toEqual([1]);
  });

  it('a batch that keeps losing is rejected after maxAttempts races, in bounded time', async () => {
    const keys = new RedisAuditKeys(`losing-${randomUuid()}`);
    // A head hash that no writer can name back (not UTF-8): every attempt loses the race.
    await admin().hset(keys.head, 'seq', '1', 'hash', Buffer.from([0xff]));
    const { appender, sealed } = await open({
      keyPrefix: keys.prefix,
      appendTimeoutMs: 60_000,
      maxAttempts: 32,
    });
    const append = answerOf(appender.append(decisionEvent(1)));
    await withTimeout(append.done, 10_000, 'the append');
    expect(append.error).toMatchObject({
      name: 'AuditUnavailableError',
      message: 'audit append lost the race to other writers 32 times',
    });
    expect(sealed.length).toBe(32);
    expect(await streamEntries(admin(), keys)).toEqual([]);
  });

  it('idle() resolves only once every queued append is answered', async () => {
    const { appender } = await open();
    const pending = [1, 2, 3].map((n) => answerOf(appender.append(decisionEvent(n))));
    await appender.idle();
    expect(pending.map((a) => a.answered)).toEqual([true, true, true]);
    expect(pending.map((a) => a.entry?.seq)).toEqual([1, 2, 3]);
  });

  it("keeps a deadline in Redis's clock: a host whose clock is a minute behind still appends", async () => {
    const realNow = Date.now.bind(Date);
    const behind = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 60_000);
    onTestFinished(() => behind.mockRestore());
    const { appender, keys } = await open({ appendTimeoutMs: 5000 });
    const entry = await appender.append(decisionEvent(1));
    expect(entry.seq).toBe(1);
    expect(await streamEntries(admin(), keys)).toEqual([entry]);
  });
});
