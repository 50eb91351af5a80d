import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { AuditEntry, Checkpoint, CheckpointStore, RollbackReport } from '../../src/audit/audit-log.js';
import { anchorAt, recordingLogger } from '../../src/audit/file/test-fixtures.js';
import { AuditAppendInDoubtError, openRedisAuditLog } from '../../src/audit/redis/index.js';
import { RedisTimeoutError } from '../../src/audit/redis/timeout.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { AuditUnavailableError } from '../../src/model/index.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DAY_SECONDS = 24 * 60 * 60;

/** A checkpoint store that answers until `stall` is set, then leaves list() unanswered until released. */
class StallingCheckpointStore implements CheckpointStore {
  readonly inner = new MemoryCheckpointStore();
  stalled: Promise<void> | undefined;
  private release: (() => void) | undefined;

  stall(): void {
    this.stalled = new Promise((resolve) => (this.release = resolve));
  }

  unstall(): void {
    this.release?.();
    this.stalled = undefined;
  }

  async list(): Promise<Checkpoint[]> {
    if (this.stalled) await this.stalled;
    return this.inner.list();
  }

  save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void> {
    return this.inner.save(checkpoint, options);
  }
}

describe('Redis audit log: open, close and a Redis that goes away', () => {
  const redis = useRedisSuite();
  let prefixes = 0;
  const nextPrefix = () => `lifecycle-${++prefixes}:{audit}`;

  /** A client whose settings the log copies: its connections carry `name` in CLIENT LIST. */
  const named = (name: string) => {
    const template = new Redis(redis.url(), { lazyConnect: true, connectionName: name });
    onTestFinished(() => template.disconnect());
    return template;
  };

  /** Ids of the connections named `name`, as Redis lists them. */
  const connectionsNamed = async (name: string): Promise<string[]> => {
    const list = (await redis.admin().call('CLIENT', 'LIST')) as string;
    return list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /^id=(\d+)/.exec(line)![1]!);
  };

  /** Clients whose command waits in Redis (a paused write, say). */
  const blockedClients = async (): Promise<number> =>
    Number(/blocked_clients:(\d+)/.exec(await redis.admin().info('clients'))?.[1]);

  /**
   * Waits until a client reconnecting on the log's schedule has failed `times` times
   * while Redis is down: by then the log's own connections have run into errors too.
   */
  const reconnectFailures = async (times: number): Promise<void> => {
    const probe = new Redis(redis.url(), {
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
    });
    let failures = 0;
    probe.on('error', () => (failures += 1));
    try {
      await redis.server().stop();
      await expect.poll(() => failures, { timeout: 20_000 }).toBeGreaterThanOrEqual(times);
    } finally {
      probe.disconnect();
    }
  };

  afterEach(async () => {
    // A test that stopped or paused Redis leaves it running for the next.
    if (!redis.server().running) await redis.server().restart();
    await redis.admin().call('CLIENT', 'UNPAUSE');
  });

  it('settles on close a batch whose connection dropped: it is cancelled, and stays refused for 24 hours', async () => {
    const log = redis.track(
      await openRedisAuditLog({
        redis: named('doubt'),
        keyPrefix: nextPrefix(),
        appendTimeoutMs: 30_000,
        settleTimeoutMs: 5000,
      }),
    );
    const [connection] = await connectionsNamed('doubt');
    // Writes wait; the append script is held in Redis until its connection is killed.
    await redis.admin().call('CLIENT', 'PAUSE', 60_000, 'WRITE');
    const append = log.append(decisionEvent(1)).catch((err: unknown) => err);
    await expect.poll(() => blockedClients(), { timeout: 10_000 }).toBe(1);
    await redis.admin().call('CLIENT', 'KILL', 'ID', connection!);
    // No reply, and no connection to ask on: the append may or may not be stored.
    await expect(append).resolves.toBeInstanceOf(AuditAppendInDoubtError);
    await expect(append).resolves.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit append got no reply and could not be settled; it may be stored',
    });
    await redis.admin().call('CLIENT', 'UNPAUSE');
    // Connected again (a settle needs a connection: it is not queued while there is none).
    await expect
      .poll(
        () =>
          log.head().then(
            () => true,
            () => false,
          ),
        { timeout: 20_000 },
      )
      .toBe(true);

    await log.close();

    // Closing settled it: not stored, and tombstoned against a late arrival.
    expect(await redis.admin().xlen(log.keys.stream)).toBe(0);
    const tombstones = await redis.admin().keys(log.keys.cancelled('*'));
    expect(tombstones).toHaveLength(1);
    const ttl = await redis.admin().ttl(tombstones[0]!);
    expect(ttl).toBeGreaterThan(DAY_SECONDS - 3600);
    expect(ttl).toBeLessThanOrEqual(DAY_SECONDS);
  });

  it('a close called while another runs waits for it: every append is answered and the connection closed', async () => {
    const log = await openRedisAuditLog({ redis: named('closing'), keyPrefix: nextPrefix() });
    let stored: AuditEntry | undefined;
    const appending = log.append(decisionEvent(1)).then((entry) => (stored = entry));
    const first = log.close();
    await log.close();
    expect(stored?.seq).toBe(1);
    expect(await connectionsNamed('closing')).toEqual([]);
    await Promise.all([first, appending]);
  });

  it('reopened at its newest checkpoint, the chain is not reported as rolled back', async () => {
    const store = new MemoryCheckpointStore();
    const keyPrefix = nextPrefix();
    const first = await openRedisAuditLog({
      redis: redis.url(),
      keyPrefix,
      checkpoints: { store, intervalMs: 0 },
    });
    for (let n = 1; n <= 3; n += 1) await first.append(decisionEvent(n));
    await first.close();
    // Closing checkpoints the head.
    expect(store.checkpoints.map((c) => c.seq)).toEqual([3]);

    const { logged, logger } = recordingLogger();
    const rollbacks: RollbackReport[] = [];
    const log = redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix,
        checkpoints: { store, intervalMs: 0 },
        logger,
        onRollback: (rollback) => rollbacks.push(rollback),
      }),
    );
    expect(await log.head()).toMatchObject({ seq: 3 });
    const report = await log.verify();
    expect(report).toMatchObject({ ok: true, entries_checked: 3 });
    expect(report).not.toHaveProperty('rollbacks');
    expect(rollbacks).toEqual([]);
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('a checkpoint store that does not answer fails checkpoints() as unavailable, naming the read', async () => {
    const store = new StallingCheckpointStore();
    onTestFinished(() => store.unstall());
    const log = redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: nextPrefix(),
        readTimeoutMs: 300,
        checkpoints: { store, everyEntries: 1, intervalMs: 0 },
      }),
    );
    await log.append(decisionEvent(1));
    // Saved: the cached list is dropped, so the next checkpoints() asks the store.
    await expect.poll(() => store.inner.checkpoints.length, { timeout: 10_000 }).toBe(1);
    store.stall();
    await expect(log.checkpoints()).rejects.toMatchObject({
      name: 'AuditUnavailableError',
      code: 'UNAVAILABLE',
      message: 'audit checkpoints could not be read from their store',
      cause: { message: 'audit checkpoints did not answer within 300 ms' },
    });
    store.unstall();
    expect((await log.checkpoints()).map((c) => c.seq)).toEqual([1]);
  });

  describe('the tree catch-up, asked again while it runs', () => {
    /** A log whose tree lags its chain and cannot grow: its first records' key is not a string. */
    const openWithStuckTree = async () => {
      const { logged, logger } = recordingLogger();
      const log = redis.track(
        await openRedisAuditLog({ redis: redis.url(), keyPrefix: nextPrefix(), logger }),
      );
      for (let n = 1; n <= 3; n += 1) await log.append(decisionEvent(n));
      await log.catchUpTree();
      const admin = redis.admin();
      await admin
        .multi()
        .hset(log.keys.head, 'tree', 0)
        .del(log.keys.treeChunk(0))
        .sadd(log.keys.treeChunk(0), 'x')
        .exec();
      const failures = () =>
        logged.filter((line) => line.message === 'audit tree catch-up failed; retried with the next batch');
      return { log, failures };
    };

    it('runs once more', async () => {
      const { log, failures } = await openWithStuckTree();
      const running = log.catchUpTree();
      const again = log.catchUpTree();
      expect(again).toBe(running);
      await running;
      expect(failures()).toHaveLength(2);
      expect(failures()[0]?.details).toMatchObject({
        err: { message: expect.stringMatching(/^WRONGTYPE/) as unknown },
      });
    });

    it('does not run again once the log is closing', async () => {
      const { log, failures } = await openWithStuckTree();
      const running = log.catchUpTree();
      void log.catchUpTree();
      await log.close();
      await running;
      expect(failures()).toHaveLength(1);
    });
  });

  it('verify() scans again when a trim moved the retained range under the scan', async () => {
    const log = redis.track(
      await openRedisAuditLog({
        redis: redis.url(),
        keyPrefix: nextPrefix(),
        verifyChunkEntries: 1,
        trimBatchEntries: 1000,
      }),
    );
    const entries = [];
    for (let n = 1; n <= 30; n += 1) entries.push(await log.append(decisionEvent(n)));
    const anchor = anchorAt(entries[19]!);
    // On the log's one connection, the trim's steps overtake the scan's one-entry chunks:
    // the first scan starts from seq 1 and finds entries gone.
    const [report] = await Promise.all([log.verify(), log.trim(anchor)]);
    expect(report).toMatchObject({
      ok: true,
      entries_checked: 10,
      head: { seq: 30, hash: entries[29]!.hash },
      retained: { from_seq: 21, anchor },
    });
  });

  it('a connection error is neither printed nor thrown: the log and its feed come back with Redis', async () => {
    const printed = vi.spyOn(console, 'error');
    onTestFinished(() => printed.mockRestore());
    const log = redis.track(await openRedisAuditLog({ redis: redis.url(), keyPrefix: nextPrefix() }));
    const seen: number[] = [];
    const unsubscribe = log.subscribe((entry) => seen.push(entry.seq));
    onTestFinished(unsubscribe);
    await log.append(decisionEvent(1));
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual([1]);

    await reconnectFailures(5);
    await redis.server().restart();

    await expect
      .poll(
        () =>
          log.append(decisionEvent(2)).then(
            (e) => e.seq,
            () => 0,
          ),
        { timeout: 20_000 },
      )
      .toBe(2);
    await expect.poll(() => seen, { timeout: 20_000 }).toEqual([1, 2]);
    const ioredisLines = printed.mock.calls.filter((args) => String(args[0]).includes('[ioredis]'));
    expect(ioredisLines).toEqual([]);
  });

  it('while Redis is down: a seq no entry has is not verified, reads fail as unavailable, and close leaves no connection', async () => {
    const log = redis.track(
      await openRedisAuditLog({ redis: named('downed'), keyPrefix: nextPrefix(), readTimeoutMs: 60_000 }),
    );
    await log.append(decisionEvent(1));
    expect(await connectionsNamed('downed')).toHaveLength(1);
    await reconnectFailures(2);

    for (const seq of [0, -1]) expect(await log.isVerified(seq), `seq ${seq}`).toBe(false);
    await expect(log.isVerified(1)).rejects.toMatchObject({
      name: 'AuditUnavailableError',
      message: 'audit chain check could not read Redis',
    });
    await log.close();

    await redis.server().restart();
    // The log's connection reconnected at most a second apart while Redis was down: had it
    // kept trying after close, it would be back by now.
    await sleep(3000);
    expect(await connectionsNamed('downed')).toEqual([]);
  });

  it('a read while the connection is not ready fails at once; it is not queued to run later', async () => {
    const log = redis.track(
      await openRedisAuditLog({ redis: named('unready'), keyPrefix: nextPrefix(), readTimeoutMs: 1000 }),
    );
    await log.append(decisionEvent(1));
    const [connection] = await connectionsNamed('unready');
    // Dropped, then every command waits (the reconnect's handshake too) for 4 s.
    const admin = redis.admin();
    await admin.multi().call('CLIENT', 'KILL', 'ID', connection!).call('CLIENT', 'PAUSE', 4000, 'ALL').exec();
    // The first read may still go out on the dropped socket; the next finds it not ready.
    await log.head().catch(() => undefined);
    const read = await log.head().catch((err: unknown) => err);
    expect(read).toBeInstanceOf(AuditUnavailableError);
    expect(read).toMatchObject({ message: 'audit head could not read Redis' });
    expect((read as Error).cause).not.toBeInstanceOf(RedisTimeoutError);
    // Back once the pause is over.
    await expect
      .poll(
        () =>
          log.head().then(
            (h) => h.seq,
            () => 0,
          ),
        { timeout: 20_000 },
      )
      .toBe(1);
  });
});
