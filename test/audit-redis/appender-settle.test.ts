import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { APPEND_SCRIPT, SETTLE_SCRIPT } from '../../src/audit/redis/append-scripts.js';
import { AuditAppendInDoubtError } from '../../src/audit/redis/index.js';
import { RedisTimeoutError } from '../../src/audit/redis/timeout.js';
import { AuditUnavailableError, randomUuid } from '../../src/model/index.js';
import { openAppender } from './support/appender.js';
import { decisionEvent } from './support/events.js';
import { leaseToAnotherWriter, streamEntries } from './support/stream.js';
import { useRedisSuite } from './support/redis-suite.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const HOUR_MS = 3_600_000;
const realNow = Date.now;

/** The host clock jumps by `ms` from now on (an NTP step), for this test only. */
function stepHostClock(ms: number): void {
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  onTestFinished(() => spy.mockRestore());
}

/** Entry ids handed out in this order, then fresh ones. */
function idsInOrder(...ids: string[]): () => string {
  const queue = [...ids];
  return () => queue.shift() ?? randomUuid();
}

/** The seq each script call was sealed to start at, one per call. */
function sealedAt(sealed: readonly { entry: AuditEntry }[][]): number[] {
  return sealed.map((batch) => batch[0]!.entry.seq);
}

describe('Redis audit log: the appender settles lost replies, reads back, waits for replicas', () => {
  const suite = useRedisSuite();

  async function open(settings: Parameters<typeof openAppender>[1] = {}) {
    const opened = await openAppender(suite.url(), settings);
    onTestFinished(() => opened.close());
    return opened;
  }

  /** One writer stores an entry under each id, one script call each. */
  async function storeWithIds(prefix: string, ids: string[]): Promise<AuditEntry[]> {
    const writer = await openAppender(suite.url(), { keyPrefix: prefix, newId: idsInOrder(...ids) });
    const entries: AuditEntry[] = [];
    for (const [n] of ids.entries()) entries.push(await writer.appender.append(decisionEvent(n)));
    await writer.close();
    return entries;
  }

  beforeAll(async () => {
    // Loaded up front: no NOSCRIPT round trip shifts a call past the levers below.
    await suite.admin().script('LOAD', APPEND_SCRIPT);
    await suite.admin().script('LOAD', SETTLE_SCRIPT);
  });

  describe('a reply that never came', () => {
    it('whose batches landed after all: each append gets its stored entry, and the find is logged', async () => {
      const h = await open({ appendTimeoutMs: 500, settleTimeoutMs: 20_000, maxBatchesInFlight: 2 });
      // The host clock steps an hour ahead after the offset was measured, so Redis takes
      // every deadline for an hour later: scripts held past their caller's bound still store.
      stepHostClock(HOUR_MS);
      await suite.admin().client('PAUSE', 2500, 'WRITE');
      // Two batches in flight, the second sealed on the first; both replies time out, and
      // each settle call runs after both scripts stored their batch.
      const [first, second] = await Promise.all([
        h.appender.append(decisionEvent(1)),
        h.appender.append(decisionEvent(2)),
      ]);

      const stored = await streamEntries(suite.admin(), h.keys);
      expect(stored).toEqual([first, second]);
      // Both replies time out at the same deadline, so either batch may be settled first.
      const bySeq = <T>(items: T[], seq: (item: T) => number) => [...items].sort((a, b) => seq(a) - seq(b));
      expect(bySeq(h.stored, (batch) => batch[0]!.seq)).toEqual([[first], [second]]);
      expect(bySeq(h.logged, (line) => (line.details as { seqs: number[] }).seqs[0]!)).toEqual(
        [[1], [2]].map((seqs) => ({
          level: 'warn',
          details: { batch: expect.stringMatching(new RegExp(`^${UUID}$`)), seqs },
          message: 'audit entries whose append reply was lost are stored in the chain',
        })),
      );
      expect(h.appender.doubtfulCount).toBe(0);
      // The writer continues from the entries it found: the next call is sealed after them.
      const third = await h.appender.append(decisionEvent(3));
      expect(third.seq).toBe(3);
      expect(sealedAt(h.sealed)).toEqual([1, 2, 3]);
    });

    it('settled as cancelled: a clean rejection with the time-out as cause, and nothing lands', async () => {
      const h = await open({ appendTimeoutMs: 300, settleTimeoutMs: 20_000 });
      // Held until long after the 300 ms bound; the script then finds its deadline passed
      // and the settle call behind it tombstones the batch.
      await suite.admin().client('PAUSE', 2000, 'WRITE');
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);

      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({ message: 'audit append got no reply in time; the batch was cancelled' });
      const cause = (err as Error).cause;
      expect(cause).toBeInstanceOf(RedisTimeoutError);
      expect((cause as Error).message).toMatch(/^audit append script did not answer within \d+ ms$/);
      expect(await suite.admin().exists(h.keys.stream)).toBe(0);
      expect(h.logged).toEqual([]);
      expect((await h.appender.append(decisionEvent(2))).seq).toBe(1);
    });

    it('and a settle call that times out too: in doubt, kept, and settled later', async () => {
      const h = await open({ appendTimeoutMs: 300, settleTimeoutMs: 300 });
      // The first append also reads the tree's frontier: done before Redis stops answering.
      const first = await h.appender.append(decisionEvent(1));
      suite.server().pause();
      onTestFinished(() => suite.server().resume());
      const err = await h.appender.append(decisionEvent(2)).catch((e: unknown) => e);
      suite.server().resume();

      expect(err).toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'audit append got no reply and could not be settled; it may be stored',
      });
      const cause = (err as Error).cause;
      expect(cause).toBeInstanceOf(RedisTimeoutError);
      expect((cause as Error).message).toBe('audit settle script did not answer within 300 ms');
      expect(h.appender.doubtfulCount).toBe(1);
      await h.appender.settleDoubtful(10_000);
      expect(h.appender.doubtfulCount).toBe(0);
      expect(await streamEntries(suite.admin(), h.keys)).toEqual([first]);
      expect(h.logged).toEqual([]);
    });
  });

  describe("the deadline, in Redis's clock", () => {
    it('a host clock stepped back after the offset was measured: refused as expired; measured again, appends land', async () => {
      const h = await open();
      stepHostClock(-HOUR_MS);
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({ message: 'audit append reached Redis after its deadline' });
      expect(await suite.admin().exists(h.keys.stream)).toBe(0);

      // Now the offset is an hour: the deadline travels an hour later than the host says.
      await h.appender.syncClock();
      const entry = await h.appender.append(decisionEvent(2));
      expect(entry.seq).toBe(1);
      expect(await streamEntries(suite.admin(), h.keys)).toEqual([entry]);
    });
  });

  describe('replies that store nothing', () => {
    it('a head hash gone while the stream has entries: refused, no fork', async () => {
      const h = await open();
      await h.appender.append(decisionEvent(1));
      await suite.admin().del(h.keys.head);
      const err = await h.appender.append(decisionEvent(2)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'audit chain head is missing while the stream has entries; refusing to fork',
      });
      expect(await suite.admin().xlen(h.keys.stream)).toBe(1);
    });

    it('a batch tombstoned while it waits out a lease: refused, naming the reply', async () => {
      const h = await open({ appendTimeoutMs: 20_000 });
      const monitor = await suite.admin().monitor();
      onTestFinished(() => void monitor.disconnect());
      const tombstonePrefix = h.keys.cancelled('');
      const tombstone = new Promise<string>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[]) => {
          const key = args.find((arg) => arg.startsWith(tombstonePrefix));
          if (key) resolve(key);
        });
      });
      // Another writer holds the lease for 3 s: the batch is told to wait, then probes.
      await leaseToAnotherWriter(suite.admin(), h.keys, 3000);
      const outcome = h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      await suite.admin().set(await tombstone, '1');

      const err = await outcome;
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({ message: 'audit append was refused (cancelled)' });
      expect(await suite.admin().exists(h.keys.stream)).toBe(0);
    });

    it('an error reply (a key of the wrong type): refused, not in doubt, with the reply as cause', async () => {
      const h = await open();
      await suite.admin().set(h.keys.ids, 'not a hash');
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'Redis refused the audit append',
        cause: { name: 'ReplyError', message: expect.stringContaining('WRONGTYPE') },
      });
      expect(h.appender.doubtfulCount).toBe(0);
      expect(await suite.admin().exists(h.keys.stream)).toBe(0);
      await suite.admin().del(h.keys.ids);
      expect((await h.appender.append(decisionEvent(2))).seq).toBe(1);
    });

    it('a connection already closing: nothing was sent, so the append is refused, not in doubt', async () => {
      const h = await open();
      h.redis.disconnect();
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).not.toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'Redis refused the audit append',
        cause: { message: "Stream isn't writeable and enableOfflineQueue options is false" },
      });
      expect(h.appender.doubtfulCount).toBe(0);
    });
  });

  describe('a batch whose first entry is already stored', () => {
    it('is answered with the stored entries, read back exactly, and the head stays where it was', async () => {
      const prefix = `landed-${randomUuid()}`;
      const ids = [randomUuid(), randomUuid(), randomUuid(), randomUuid()];
      const before = await storeWithIds(prefix, ids);
      // Its first call takes one append; the two queued behind it go together.
      const h = await open({
        keyPrefix: prefix,
        maxBatchesInFlight: 1,
        newId: idsInOrder(ids[1]!, ids[1]!, ids[2]!),
      });
      const answered = await Promise.all([10, 11, 12].map((n) => h.appender.append(decisionEvent(n))));

      expect(answered).toEqual([before[1], before[1], before[2]]);
      expect(h.stored).toEqual([[before[1]], [before[1], before[2]]]);
      expect(await streamEntries(suite.admin(), h.keys)).toEqual(before);
      // Entries 2 and 3 lie behind the head (4): the next call is sealed on 4 at once.
      expect((await h.appender.append(decisionEvent(13))).seq).toBe(5);
      expect(sealedAt(h.sealed)).toEqual([5, 5, 5]);
      expect(h.rollbacks).toEqual([]);
    });

    it('ahead of the head the writer knew: the head moves to it', async () => {
      const prefix = `landed-ahead-${randomUuid()}`;
      const ids = [randomUuid(), randomUuid()];
      const h = await open({ keyPrefix: prefix, newId: idsInOrder(ids[1]!) });
      const before = await storeWithIds(prefix, ids);

      expect(await h.appender.append(decisionEvent(10))).toEqual(before[1]);
      expect((await h.appender.append(decisionEvent(11))).seq).toBe(3);
      // Sealed on the empty chain first; then after the entry it found, without a lost race.
      expect(sealedAt(h.sealed)).toEqual([1, 3]);
      expect(h.rollbacks).toEqual([]);
    });

    it("at the head's seq in a chain that replaced this writer's: the rollback is still reported", async () => {
      const prefix = `landed-replaced-${randomUuid()}`;
      const z = randomUuid();
      const h = await open({ keyPrefix: prefix, newId: idsInOrder(randomUuid(), randomUuid(), z) });
      await h.appender.append(decisionEvent(1));
      const known = await h.appender.append(decisionEvent(2));
      // The chain is replaced by one whose entry 2 is this writer's next batch, stored by another.
      await suite.admin().del(...(await suite.admin().keys(`${prefix}:*`)));
      const replaced = await storeWithIds(prefix, [randomUuid(), z]);

      expect(await h.appender.append(decisionEvent(3))).toEqual(replaced[1]);
      expect((await h.appender.append(decisionEvent(4))).seq).toBe(3);
      expect(h.rollbacks).toEqual([
        {
          known: { seq: 2, hash: known.hash },
          found: { seq: 2, hash: replaced[1]!.hash },
        },
      ]);
    });

    it('with fewer entries stored from there than the batch has: rejected, not answered short', async () => {
      const prefix = `landed-short-${randomUuid()}`;
      const ids = [randomUuid(), randomUuid()];
      const before = await storeWithIds(prefix, ids);
      const h = await open({
        keyPrefix: prefix,
        maxBatchesInFlight: 1,
        newId: idsInOrder(ids[1]!, ids[1]!, randomUuid()),
      });
      const outcomes = await Promise.all(
        [10, 11, 12].map((n) => h.appender.append(decisionEvent(n)).catch((e: unknown) => e)),
      );

      expect(outcomes[0]).toEqual(before[1]);
      // The batch of two finds its first entry stored last: only one entry to read back.
      const [, second, third] = outcomes;
      expect(second).toBeInstanceOf(AuditUnavailableError);
      expect((second as Error).message).toMatch(
        new RegExp(`^audit batch ${UUID} is stored but cannot be read back$`),
      );
      expect(third).toBe(second);
      expect(await streamEntries(suite.admin(), h.keys)).toEqual(before);
    });

    it('whose id points at another entry (a tampered id index): rejected, not answered with that entry', async () => {
      const prefix = `landed-elsewhere-${randomUuid()}`;
      const ids = [randomUuid(), randomUuid(), randomUuid()];
      const before = await storeWithIds(prefix, ids);
      const h = await open({ keyPrefix: prefix, newId: idsInOrder(ids[0]!) });
      await suite.admin().hset(h.keys.ids, ids[0]!, '2');

      const err = await h.appender.append(decisionEvent(10)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect((err as Error).message).toMatch(
        new RegExp(`^audit batch ${UUID} is stored but cannot be read back$`),
      );
      expect(await streamEntries(suite.admin(), h.keys)).toEqual(before);
    });

    it('where the stream item holds no entry: rejected, naming the unreadable item', async () => {
      const prefix = `landed-empty-${randomUuid()}`;
      const h = await open({ keyPrefix: prefix, newId: idsInOrder('planted') });
      await suite.admin().xadd(h.keys.stream, '5-0', 'note', 'no entry here');
      await suite.admin().hset(h.keys.ids, 'planted', '5');

      const err = await h.appender.append(decisionEvent(10)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditUnavailableError);
      expect(err).toMatchObject({
        message: 'audit append failed',
        cause: { message: 'stored entry: not valid JSON (Unexpected end of JSON input)' },
      });
    });
  });

  describe('WAIT for replicas', () => {
    /** A user that may do everything but WAIT, as an operator might set one up. */
    async function urlWithoutWait(): Promise<string> {
      const user = `no-wait-${randomUuid()}`;
      await suite.admin().call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-wait');
      return suite.url().replace('redis://', `redis://${user}:secret@`);
    }

    it('with none required, sends no WAIT: a user without WAIT appends', async () => {
      const url = await urlWithoutWait();
      const h = await openAppender(url, { waitReplicas: { count: 0, timeoutMs: 100 } });
      onTestFinished(() => h.close());
      expect((await h.appender.append(decisionEvent(1))).seq).toBe(1);
    });

    it('refused: the entry is stored, the append in doubt, with the refusal as cause', async () => {
      const url = await urlWithoutWait();
      const h = await openAppender(url, { waitReplicas: { count: 1, timeoutMs: 100 } });
      onTestFinished(() => h.close());
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'audit entries are stored but WAIT for replicas failed',
        cause: { name: 'ReplyError', message: expect.stringContaining('NOPERM') },
      });
      expect(await suite.admin().xlen(h.keys.stream)).toBe(1);
    });

    it('fewer replicas than required: in doubt, naming how many confirmed', async () => {
      const h = await open({ waitReplicas: { count: 1, timeoutMs: 100 } });
      const err = await h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({
        message: 'audit entries are stored but only 0 of 1 replicas confirmed them',
      });
      expect(await suite.admin().xlen(h.keys.stream)).toBe(1);
    });

    it("no answer: in doubt after WAIT's own time-out and a second more", async () => {
      const h = await open({ appendTimeoutMs: 1000, waitReplicas: { count: 1, timeoutMs: 3000 } });
      const outcome = h.appender.append(decisionEvent(1)).catch((e: unknown) => e);
      // Stored, so WAIT is blocking (for 3 s): Redis stops answering before it returns.
      await expect.poll(() => suite.admin().xlen(h.keys.stream), { timeout: 2000 }).toBe(1);
      suite.server().pause();
      onTestFinished(() => suite.server().resume());
      const err = await outcome;
      suite.server().resume();

      expect(err).toBeInstanceOf(AuditAppendInDoubtError);
      expect(err).toMatchObject({ message: 'audit entries are stored but WAIT for replicas failed' });
      const cause = (err as Error).cause;
      expect(cause).toBeInstanceOf(RedisTimeoutError);
      // The longer of WAIT's time-out and the append's bound, plus a second.
      expect((cause as Error).message).toBe('WAIT did not answer within 4000 ms');
    });
  });
});
