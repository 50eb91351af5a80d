import { buildNamespaceIndexes } from './namespace-indexes.js';
import { Redis, type RedisOptions } from 'ioredis';
import { connectRedis } from '../../redis/redis-connection.js';
import { ArbiterError, AuditUnavailableError, randomUuid } from '../../model/index.js';
import type {
  AuditEntry,
  AuditEventInput,
  AuditLog,
  AuditPage,
  AuditQuery,
  ChainHead,
  Checkpoint,
  CheckpointStore,
  RetainedRange,
  RetentionAnchor,
  RollbackReport,
  VerifyReport,
} from '../audit-log.js';
import { type AuditTree, StoredAuditTree } from '../audit-tree.js';
import { GENESIS_HASH } from '../chain.js';
import { systemEvent } from '../system-event.js';
import { CheckpointSigner, type CheckpointSigning } from '../checkpoint-signer.js';
import { ChainAppender } from './chain-appender.js';
import { verifyStream, verifyUpTo } from './chain-check.js';
import { Checkpointer } from './checkpointer.js';
import { queryIndexes } from './index-query.js';
import { type AuditLogger, silentLogger } from '../audit-logger.js';
import { DEFAULT_KEY_PREFIX, RedisAuditKeys } from './redis-keys.js';
import { readEntries } from './stream-reader.js';
import { lastStreamId, StreamTail } from './stream-tail.js';
import { withTimeout } from './timeout.js';
import { RedisTreeStore } from './redis-tree.js';
import { catchUpRedisTree } from './tree-catch-up.js';
import { FROM_FIELD, readRetained, removeArchived, TRIM_BATCH_ENTRIES, trimTo } from './retention.js';

export interface RedisAuditLogOptions {
  /** A redis:// URL, or a client whose settings are copied: the log always opens its own connections. */
  redis: Redis | string;
  /** Default `arbiter:{audit}`; keep a `{hash tag}` in it on a Redis Cluster. */
  keyPrefix?: string;
  /** Bound on one append, queueing included; past it the append rejects (503). Default 2000. */
  appendTimeoutMs?: number;
  /** Extra bound on settling an append whose reply was lost. Default 1000. */
  settleTimeoutMs?: number;
  /** Bound on reads (query, get, verify chunks). Default 5000. */
  readTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Most entries in one group commit. Default 100. */
  maxBatchEntries?: number;
  /** Group commits one process keeps in flight, each sealed on the one before. Default 2. */
  maxBatchesInFlight?: number;
  /** Compare-and-append attempts of one batch. Default 32. */
  maxAppendAttempts?: number;
  /** After each append, WAIT until this many replicas have it (or timeoutMs passes). */
  waitReplicas?: { count: number; timeoutMs: number };
  checkpoints?: {
    store: CheckpointStore;
    /** Default 1000. */
    everyEntries?: number;
    /** Default 60000; 0 disables the timer. */
    intervalMs?: number;
    /** Default: always (a single replica). */
    isLeader?: () => boolean;
    /** Sign checkpoints of the Merkle tree (C2SP checkpoints) with this key. */
    signing?: CheckpointSigning;
  };
  /** XRANGE COUNT of verification scans. Default 1000. */
  verifyChunkEntries?: number;
  /** Archived entries removed per step of a trim. Default 1000. */
  trimBatchEntries?: number;
  logger?: AuditLogger;
  /** Clock of checkpoint times. */
  now?: () => Date;
  /** Ids of new entries (the decision's audit_ref). Default: random UUID. */
  newId?: () => string;
  /** Bench seam: append the chain alone, no Merkle tree (what the tree costs an append). */
  withoutTree?: boolean;
  /** Told when stored entries are found gone (metrics, readiness); also logged and recorded. */
  onRollback?: (rollback: RollbackReport) => void;
}

const DEFAULTS = {
  keyPrefix: DEFAULT_KEY_PREFIX,
  appendTimeoutMs: 2000,
  settleTimeoutMs: 1000,
  readTimeoutMs: 5000,
  connectTimeoutMs: 5000,
  maxBatchEntries: 100,
  maxBatchesInFlight: 2,
  maxAppendAttempts: 32,
  verifyChunkEntries: 1000,
  trimBatchEntries: TRIM_BATCH_ENTRIES,
  logger: silentLogger,
  now: (): Date => new Date(),
  newId: (): string => randomUuid(),
};

/**
 * Connection settings that keep a command from running later than the caller was told:
 * no offline queue, no resending of unanswered commands after a reconnect.
 */
const FAIL_FAST: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  // Stryker disable next-line BooleanLiteral: maxRetriesPerRequest 0 rejects what is unanswered at a reconnect: none to resend.
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
};

const CANCEL_TTL_SECONDS = 24 * 60 * 60;

/** Opens the Redis audit log: connects, reads the chain head and the checkpoints. */
export async function openRedisAuditLog(options: RedisAuditLogOptions): Promise<RedisAuditLog> {
  const settings = { ...DEFAULTS, ...options };
  const connectOptions: RedisOptions = { ...FAIL_FAST, connectTimeout: settings.connectTimeoutMs };
  const connection =
    typeof options.redis === 'string'
      ? connectRedis(options.redis, connectOptions)
      : options.redis.duplicate(connectOptions);
  // Connection errors surface through commands; without a listener ioredis would print them.
  connection.on('error', () => undefined);
  const keys = new RedisAuditKeys(settings.keyPrefix);
  try {
    await withTimeout(connection.connect(), settings.connectTimeoutMs, 'Redis connect');
    const head = await readHead(connection, keys);
    await buildNamespaceIndexes(connection, keys);
    const log = new RedisAuditLog(connection, keys, head, settings);
    await log.start();
    return log;
  } catch (err) {
    connection.disconnect();
    throw new AuditUnavailableError('cannot open the Redis audit log', { cause: err });
  }
}

type Settings = typeof DEFAULTS & RedisAuditLogOptions;

/** The audit chain in a Redis stream, shared by every replica; see docs/audit-redis.md. */
export class RedisAuditLog implements AuditLog {
  private readonly appender: ChainAppender;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly tail: StreamTail;
  private closing: Promise<void> | undefined;
  private catchingUp: Promise<void> | undefined;
  // Stryker disable next-line BooleanLiteral: every run clears it before reading it.
  private catchUpAgain = false;
  private finishingTrim: Promise<void> | undefined;

  /** Use openRedisAuditLog. */
  constructor(
    private readonly redis: Redis,
    readonly keys: RedisAuditKeys,
    head: ChainHead,
    private readonly settings: Settings,
  ) {
    const cp = settings.checkpoints;
    this.checkpointer = cp
      ? new Checkpointer(
          {
            store: cp.store,
            everyEntries: cp.everyEntries ?? 1000,
            intervalMs: cp.intervalMs ?? 60_000,
            isLeader: cp.isLeader ?? (() => true),
            listCacheMs: 5000,
            ...(cp.signing ? { signer: new CheckpointSigner(cp.signing, this.tree()) } : {}),
          },
          settings.logger,
        )
      : undefined;
    this.appender = new ChainAppender(redis, keys, head, {
      appendTimeoutMs: settings.appendTimeoutMs,
      settleTimeoutMs: settings.settleTimeoutMs,
      maxBatchEntries: settings.maxBatchEntries,
      maxBatchesInFlight: settings.maxBatchesInFlight,
      maxAttempts: settings.maxAppendAttempts,
      waitReplicas: settings.waitReplicas,
      cancelTtlSeconds: CANCEL_TTL_SECONDS,
      newId: settings.newId,
      logger: settings.logger,
      onStored: (entries) => {
        const last = entries[entries.length - 1];
        if (last) this.checkpointer?.offer(this.checkpointOf(last));
      },
      onSealed: (sealed) => this.tail.expect(sealed),
      onTreeBehind: () => void this.catchUpTree(),
      onRollback: ({ known, found }) =>
        this.rolledBack(known.seq, found, 'the head went back under this replica'),
      withoutTree: settings.withoutTree,
    });
    this.tail = new StreamTail(
      () => {
        // Its reads wait for Redis to come back. The read in flight when the connection
        // drops is sent again (an XREAD after an explicit id reads the same): ioredis would
        // otherwise leave it unanswered, and the feed would wait on it for good.
        const connection = redis.duplicate({
          enableOfflineQueue: true,
          maxRetriesPerRequest: null,
          autoResendUnfulfilledCommands: true,
          // Stryker disable next-line BooleanLiteral: the feed sends its first read at once, which connects a lazy client too.
          lazyConnect: false,
        });
        // The feed logs its own read errors; this only keeps ioredis from printing them.
        connection.on('error', () => undefined);
        return connection;
      },
      keys.stream,
      settings.logger,
      () => lastStreamId(redis, keys.stream),
    );
  }

  /** @internal called by openRedisAuditLog. */
  async start(): Promise<void> {
    await this.appender.syncClock();
    this.redis.on('ready', () => {
      this.appender.syncClock().catch((err: unknown) => {
        this.settings.logger.warn({ err }, 'audit log could not read the Redis clock');
      });
    });
    await this.checkpointer?.start(() => this.headCheckpoint());
    await this.warnIfBehindCheckpoints();
    // In the background: a log older than the tree may take a while to hash in.
    void this.catchUpTree();
    this.finishingTrim = this.finishTrim();
  }

  /** A trim that a crash interrupted (the anchor recorded, entries left): any replica finishes it. */
  private async finishTrim(): Promise<void> {
    try {
      const { anchor } = await readRetained(this.redis, this.keys);
      if (!anchor) return;
      const [oldest] = await this.redis.xrange(this.keys.stream, '-', '+', 'COUNT', 1);
      if (!oldest || Number(oldest[0].split('-')[0]) > anchor.seq) return;
      this.settings.logger.info({ anchor_seq: anchor.seq }, 'finishing an interrupted audit trim');
      await removeArchived(
        this.redis,
        this.keys,
        anchor.seq,
        this.settings.trimBatchEntries,
        () => this.closed,
      );
    } catch (err) {
      this.settings.logger.warn(
        { err },
        'an interrupted audit trim could not be finished; the next trim will',
      );
    }
  }

  /**
   * Hashes entries the Merkle tree lacks into it (one run at a time; asked again while
   * running, it runs once more). Resolves when the tree has caught up or cannot.
   */
  catchUpTree(): Promise<void> {
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    const run = async (): Promise<void> => {
      do {
        this.catchUpAgain = false;
        try {
          await catchUpRedisTree(this.redis, this.keys, this.settings.logger);
        } catch (err) {
          this.settings.logger.warn({ err }, 'audit tree catch-up failed; retried with the next batch');
        }
      } while (this.catchUpAgain && !this.closed);
    };
    this.catchingUp = run().finally(() => (this.catchingUp = undefined));
    return this.catchingUp;
  }

  checkpoints(): Promise<Checkpoint[]> {
    // They are kept in the checkpoint store (a ConfigMap), not in Redis.
    return this.read(
      'audit checkpoints',
      async () => (await this.checkpointer?.list()) ?? [],
      'could not be read from their store',
    );
  }

  /** The Merkle tree over the chain, stored beside it in Redis. */
  tree(): AuditTree {
    return new StoredAuditTree(new RedisTreeStore(this.redis, this.keys));
  }

  /** A head behind the newest checkpoint at start: entries that were stored are gone. */
  private async warnIfBehindCheckpoints(): Promise<void> {
    const newest = (await this.checkpointer?.list().catch(() => undefined))?.at(-1);
    const head = await readHead(this.redis, this.keys);
    if (newest && newest.seq > head.seq)
      this.rolledBack(newest.seq, head, 'the chain ends before its newest checkpoint');
  }

  /**
   * Entries up to seq `known` were stored, and Redis now holds `found`: says so loudly
   * (error log with the range, onRollback) and records it in the chain, which continues
   * from `found`; /audit/verify lists the recorded losses.
   */
  private rolledBack(known: number, found: ChainHead, how: string): void {
    const rollback: RollbackReport = {
      lost_from_seq: found.seq < known ? found.seq + 1 : known,
      lost_to_seq: known,
      found_head: found,
      detected_at: this.settings.now().toISOString(),
    };
    this.settings.logger.error(
      { ...rollback },
      `audit entries ${rollback.lost_from_seq}..${rollback.lost_to_seq} were stored and are gone from Redis (${how}: a failover to a replica that lacked them? use --redis-wait-replicas); the chain continues from seq ${found.seq}`,
    );
    this.settings.onRollback?.(rollback);
    void this.append(
      systemEvent('audit.rollback_detected', rollback.detected_at, null, { ...rollback }),
    ).catch((err: unknown) =>
      this.settings.logger.error(
        { err, ...rollback },
        'the audit rollback could not be recorded in the chain',
      ),
    );
  }

  append(event: AuditEventInput): Promise<AuditEntry> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit log is closed'));
    return this.appender.append(event);
  }

  query(query: AuditQuery): Promise<AuditPage> {
    return this.read('audit query', () => queryIndexes(this.redis, this.keys, query, this.settings.logger));
  }

  // Reads below take the retained range's start (`from`) with the index lookup in one
  // MULTI: while a trim runs, archived entries can still be indexed and stored.
  get(id: string): Promise<AuditEntry | undefined> {
    return this.read('audit get', async () => {
      const [seq, from] = await this.withFrom<string>((m) => m.hget(this.keys.ids, id));
      // Stryker disable next-line ConditionalExpression: Number(null) is 0, below every from (at least 1); the check saves a read.
      if (seq === null || Number(seq) < from) return undefined;
      const [entry] = await readEntries(this.redis, this.keys, [Number(seq)]);
      return entry?.id === id ? entry : undefined;
    });
  }

  byDecision(decisionId: string): Promise<AuditEntry[]> {
    return this.read('audit by decision', async () => {
      const key = this.keys.index('decision_id', decisionId);
      const [seqs, from] = await this.withFrom<string[]>((m) => m.zrange(key, 0, -1));
      return readEntries(
        this.redis,
        this.keys,
        // Stryker disable next-line ArrayDeclaration: ZRANGE answers a list, never null.
        (seqs ?? []).map(Number).filter((s) => s >= from),
      );
    });
  }

  isVerified(seq: number): Promise<boolean> {
    return this.read('audit chain check', async () => {
      if (!Number.isSafeInteger(seq) || seq < 1) return false;
      const head = await readHead(this.redis, this.keys);
      if (seq > head.seq) return false;
      const { from_seq, anchor } = await readRetained(this.redis, this.keys);
      if (seq < from_seq) return false;
      const checkpoints = (await this.checkpointer?.list()) ?? [];
      return verifyUpTo(
        this.redis,
        this.keys,
        seq,
        checkpoints,
        this.settings.verifyChunkEntries,
        anchor && { seq: anchor.seq, hash: anchor.hash },
      );
    });
  }

  retained(): Promise<RetainedRange> {
    return this.read('audit retained range', () => readRetained(this.redis, this.keys));
  }

  /** Not bounded by readTimeoutMs: removing many entries takes a while (a batch per step). */
  async trim(anchor: RetentionAnchor): Promise<void> {
    if (this.closed) throw new AuditUnavailableError('the audit log is closed');
    try {
      await trimTo(this.redis, this.keys, anchor, {
        batchEntries: this.settings.trimBatchEntries,
        requireTree: !this.settings.withoutTree,
        logger: this.settings.logger,
      });
    } catch (err) {
      if (err instanceof ArbiterError) throw err;
      throw new AuditUnavailableError('audit trim could not reach Redis', { cause: err });
    }
  }

  /** A full scan; not bounded by readTimeoutMs as a whole, only by Redis answering each chunk. */
  async verify(): Promise<VerifyReport> {
    try {
      const checkpoints = (await this.checkpointer?.list(true)) ?? [];
      let report = await this.verifyRetained(checkpoints);
      // A trim that moved the anchor during the scan removed entries it was about to read.
      if (!report.ok && (await this.retained()).from_seq !== report.retained.from_seq)
        report = await this.verifyRetained(checkpoints);
      const recorded = await queryIndexes(
        this.redis,
        this.keys,
        { event_type: 'audit.rollback_detected', order: 'asc', limit: 1000 },
        this.settings.logger,
      );
      const rollbacks = recorded.entries.map((e) => ({
        ...(e.data as unknown as RollbackReport),
        audit_ref: e.id,
      }));
      return rollbacks.length > 0 ? { ...report, rollbacks } : report;
    } catch (err) {
      if (err instanceof ArbiterError) throw err; // the checkpoint store's, say: not Redis
      throw new AuditUnavailableError('audit verification could not read Redis', { cause: err });
    }
  }

  /** Verifies from the retained range's start; the range first, so its anchor is at or below the head. */
  private async verifyRetained(
    checkpoints: readonly Checkpoint[],
  ): Promise<VerifyReport & { retained: RetainedRange }> {
    const retained = await readRetained(this.redis, this.keys);
    const head = await readHead(this.redis, this.keys);
    const { anchor } = retained;
    const report = await verifyStream(
      this.redis,
      this.keys,
      checkpoints,
      head,
      this.settings.verifyChunkEntries,
      anchor && { seq: anchor.seq, hash: anchor.hash },
    );
    return { ...report, retained };
  }

  head(): Promise<ChainHead> {
    return this.read('audit head', () => readHead(this.redis, this.keys));
  }

  subscribe(listener: (entry: AuditEntry) => void): () => void {
    return this.tail.subscribe(listener);
  }

  private get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Answers every append, settles what is in doubt and disconnects; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    await this.appender.idle();
    await this.catchingUp;
    await this.finishingTrim;
    if (this.appender.doubtfulCount > 0) await this.appender.settleDoubtful(this.settings.settleTimeoutMs);
    await this.tail.stop();
    if (this.checkpointer) {
      const head = await this.headCheckpoint().catch(() => undefined);
      if (head) this.checkpointer.offer(head, true);
      await this.checkpointer.stop();
    }
    // Stryker disable next-line StringLiteral: the time-out's message is dropped.
    await withTimeout(this.redis.quit(), 1000, 'Redis quit').catch(() => this.redis.disconnect());
  }

  private async headCheckpoint(): Promise<Checkpoint | undefined> {
    const [seq, hash, id] = await this.redis.hmget(this.keys.head, 'seq', 'hash', 'id');
    if (!seq || !hash || !id) return undefined;
    return { seq: Number(seq), hash, entry_id: id, time: this.settings.now().toISOString() };
  }

  private checkpointOf(entry: AuditEntry): Checkpoint {
    return { seq: entry.seq, hash: entry.hash, entry_id: entry.id, time: this.settings.now().toISOString() };
  }

  /** The reply of one read, and the retained range's start, read atomically with it. */
  private async withFrom<T>(
    read: (multi: ReturnType<Redis['multi']>) => unknown,
  ): Promise<[T | null, number]> {
    const multi = this.redis.multi();
    read(multi);
    // Stryker disable next-line ArrayDeclaration: exec() answers null only for a WATCH that failed, and there is none.
    const results = (await multi.hget(this.keys.head, FROM_FIELD).exec()) ?? [];
    for (const [err] of results) if (err) throw err;
    return [(results[0]?.[1] ?? null) as T | null, Number(results[1]?.[1] ?? 1)];
  }

  private async read<T>(what: string, run: () => Promise<T>, failed = 'could not read Redis'): Promise<T> {
    try {
      return await withTimeout(run(), this.settings.readTimeoutMs, what);
    } catch (err) {
      if (err instanceof ArbiterError) throw err;
      throw new AuditUnavailableError(`${what} ${failed}`, { cause: err });
    }
  }
}

async function readHead(redis: Redis, keys: RedisAuditKeys): Promise<ChainHead> {
  const [seq, hash] = await redis.hmget(keys.head, 'seq', 'hash');
  return seq && hash ? { seq: Number(seq), hash } : { seq: 0, hash: GENESIS_HASH };
}
