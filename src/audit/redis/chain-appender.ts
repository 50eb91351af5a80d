import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AuditUnavailableError, randomUuid } from '../../model/index.js';
import type { AuditEntry, AuditEventInput, ChainHead } from '../audit-log.js';
import { sealForStorage, type SealedEntry } from '../chain.js';
import { auditEventRefusal } from '../event-check.js';
import type { TreeFrontier } from '../merkle/tree-frontier.js';
import { APPEND_SCRIPT, SETTLE_SCRIPT } from './append-scripts.js';
import { decodeEntryOrThrow, entryField, indexKeysOf } from './entry-codec.js';
import { AuditAppendInDoubtError } from './errors.js';
import type { AuditLogger } from '../audit-logger.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';
import { measureClockOffsetMs } from './redis-clock.js';
import { decodeFrontier, encodeFrontier, growTree, RedisTreeStore, type TreeGrowth } from './redis-tree.js';
import { LuaScript } from '../../redis/lua-script.js';
import { sleep, withTimeout } from './timeout.js';

export interface ChainAppenderSettings {
  appendTimeoutMs: number;
  /** Bound on settling a batch whose reply was lost, after appendTimeoutMs. */
  settleTimeoutMs: number;
  maxBatchEntries: number;
  /** Script calls kept in flight; each is sealed on the predicted head after the one before. */
  maxBatchesInFlight: number;
  /** Races one batch may lose (conflict replies) before its appends are rejected. */
  maxAttempts: number;
  waitReplicas?: { count: number; timeoutMs: number };
  /** How long a cancelled batch stays refused: longer than any command can sit in a socket. */
  cancelTtlSeconds: number;
  newId: () => string;
  logger: AuditLogger;
  /**
   * Called with each stored batch, in chain order, except batches whose reply was lost: each
   * is reported when it is settled, and two settled together may come in either order.
   */
  onStored: (entries: readonly AuditEntry[]) => void;
  /** Called with each batch as it is sent, sealed on the head it expects. */
  onSealed?: (sealed: readonly SealedEntry[]) => void;
  /** A batch was stored while the Merkle tree lags the chain: the tree needs a catch-up. */
  onTreeBehind?: () => void;
  /**
   * The stored head went back, or forked at the same seq, under this writer: entries it
   * had stored are gone (a failover to a replica that lacked them). `known` is the head
   * this writer had stored, `found` the one Redis holds now.
   */
  onRollback?: (rollback: { known: ChainHead; found: ChainHead }) => void;
  /** Bench seam: append the chain alone, no tree records (what the tree costs an append). */
  withoutTree?: boolean;
}

interface PendingAppend {
  event: AuditEventInput;
  /** The entry's id, given when the append is queued. */
  id: string;
  deadline: number;
  resolve: (entry: AuditEntry) => void;
  reject: (err: Error) => void;
}

/** Appends that go to Redis together, in one script call per attempt. */
interface Batch {
  /** Names the batch's tombstone; the same for every attempt. */
  id: string;
  /** Place in this writer's order: batches that lost a race are sent again in this order. */
  order: number;
  appends: PendingAppend[];
  /** The earliest deadline of its appends. */
  deadline: number;
  /** Races lost so far: conflict replies to calls sealed on a head that Redis reported. */
  losses: number;
  /** The last reply gave this writer the lease: send again at once. */
  leased: boolean;
  /** The last reply was 'busy': wait this long, then probe before sealing again. */
  waitMs: number;
}

/** One attempt of a batch whose reply is outstanding. */
interface Flight {
  batch: Batch;
  entries: AuditEntry[];
  /** The head once the batch is stored: where the next batch is sealed. */
  head: ChainHead;
  /** The tree's frontier once the batch is stored, when the writer knows it. */
  frontier: TreeFrontier | undefined;
  /** Sealed on the head the call before it would leave: a conflict may be that call's failure, not a race lost. */
  predicted: boolean;
}

/** A batch whose script call got no reply: it may or may not be stored. */
interface DoubtfulBatch {
  batchId: string;
  firstId: string;
  count: number;
}

const APPEND = new LuaScript(APPEND_SCRIPT);
const SETTLE = new LuaScript(SETTLE_SCRIPT);
// ioredis raises this before writing anything to the socket.
const NOT_SENT_MESSAGE = "Stream isn't writeable";

/**
 * Appends to the shared chain: group commit (queued appends go together in one script
 * call), several calls in flight (each sealed on the head the one before will leave, so
 * sealing overlaps Redis's work), compare-and-append on the head, re-seal and retry when
 * another writer moved the head, and settling of calls whose reply was lost so that a
 * rejected append never lands later.
 *
 * Replies arrive in the order the calls were sent (one connection). When an attempt does
 * not store its batch, every later one in flight was sealed on it and cannot store either:
 * the appender sends nothing more until all of them are back, then re-seals the batches
 * that lost, in their order, on the head the replies reported.
 */
export class ChainAppender {
  private queue: PendingAppend[] = [];
  private inFlight: Flight[] = [];
  /** Batches that lost a race, by order: sent again before anything new. */
  private retry: Batch[] = [];
  /** An attempt in flight did not store its batch: wait until none is in flight. */
  // Stryker disable next-line BooleanLiteral: the first canSend(), with nothing in flight, clears it before it is read.
  private stalled = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private batchCount = 0;
  private doubtful: DoubtfulBatch[] = [];
  private clockOffsetMs = 0;
  /** Names this writer in the head hash when it holds the lease or is next. */
  private readonly writerId = randomUUID();
  /** Since when (Redis's clock) this writer's batches have been refused, if they are. */
  private waitingSinceMs: number | undefined;
  /** The Merkle tree's frontier at this.head, when known; read again after the head moved under us. */
  private frontier: TreeFrontier | undefined;
  private readonly tree: RedisTreeStore;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisAuditKeys,
    private head: ChainHead,
    private readonly settings: ChainAppenderSettings,
  ) {
    this.tree = new RedisTreeStore(redis, keys);
  }

  append(event: AuditEventInput): Promise<AuditEntry> {
    const refusal = auditEventRefusal(event);
    if (refusal) return Promise.reject(refusal);
    return new Promise((resolve, reject) => {
      this.queue.push({
        event,
        id: this.settings.newId(),
        deadline: Date.now() + this.settings.appendTimeoutMs,
        resolve,
        reject,
      });
      // A loop waiting for a reply with every slot taken would only wait again: a reply wakes it.
      if (!this.running) this.running = this.run();
      else if (this.canSend()) this.signal();
    });
  }

  /** Measures Redis's clock against ours (on connect and after every reconnect). */
  async syncClock(): Promise<void> {
    this.clockOffsetMs = await measureClockOffsetMs(this.redis);
  }

  /** Resolves once every queued append has been answered. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Settles batches left in doubt (e.g. on close or after Redis came back). */
  async settleDoubtful(timeoutMs: number): Promise<void> {
    const pending = this.doubtful;
    this.doubtful = [];
    for (const batch of pending) {
      try {
        await this.settleOnce(batch, timeoutMs);
      } catch {
        this.doubtful.push(batch);
      }
    }
  }

  get doubtfulCount(): number {
    return this.doubtful.length;
  }

  private async run(): Promise<void> {
    try {
      do await this.step();
      while (this.queue.length > 0 || this.retry.length > 0 || this.inFlight.length > 0);
    } finally {
      // Synchronous with the check above: no append can slip in between.
      this.running = undefined;
    }
  }

  /** Sends the next batch if there is room, or waits for a reply or an append. */
  private async step(): Promise<void> {
    const batch = this.canSend() ? (this.retry.shift() ?? this.takeBatch()) : undefined;
    if (batch) await this.send(batch);
    else if (this.inFlight.length > 0) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private canSend(): boolean {
    if (this.stalled && this.inFlight.length === 0) this.stalled = false;
    return !this.stalled && this.inFlight.length < this.maxInFlight;
  }

  private get maxInFlight(): number {
    return Math.max(1, this.settings.maxBatchesInFlight);
  }

  /** The next queued appends that are still within their bound, as one batch. */
  private takeBatch(): Batch | undefined {
    const now = Date.now();
    // Spread the queue over the free slots, so the next batch is sealed while Redis stores this one.
    const free = this.maxInFlight - this.inFlight.length;
    const size = Math.min(this.settings.maxBatchEntries, Math.ceil(this.queue.length / free));
    const appends = this.queue.splice(0, size).filter((p) => {
      if (p.deadline > now) return true;
      p.reject(new AuditUnavailableError('audit append timed out while queued'));
      return false;
    });
    if (appends.length === 0) return undefined;
    this.batchCount += 1;
    return {
      id: randomUuid(),
      order: this.batchCount,
      appends,
      deadline: Math.min(...appends.map((p) => p.deadline)),
      losses: 0,
      // Stryker disable next-line BooleanLiteral: read only after a lost race, whose reply sets it.
      leased: false,
      waitMs: 0,
    };
  }

  private async send(batch: Batch): Promise<void> {
    try {
      // Only with nothing in flight: the head is then known, not predicted.
      if (this.inFlight.length === 0) await this.beforeResend(batch);
      this.assertCanSend(batch.deadline);
    } catch (err) {
      this.fail(batch, err);
      return;
    }
    const last = this.inFlight.at(-1);
    const base = last?.head ?? this.head;
    let sealed: SealedEntry[];
    try {
      sealed = sealBatch(batch.appends, base);
    } catch (err) {
      // An event that changed since append() checked it: its batch fails, the appender goes on.
      this.fail(batch, err);
      return;
    }
    const frontier = last ? last.frontier : this.frontier;
    const growth =
      frontier?.size === base.seq && !this.settings.withoutTree
        ? growTree(
            this.keys,
            frontier,
            sealed.map((s) => s.leaf),
          )
        : undefined;
    this.settings.onSealed?.(sealed);
    const entries = sealed.map((s) => s.entry);
    const flight: Flight = {
      batch,
      entries,
      head: headOf(entries),
      frontier: growth?.frontier,
      predicted: last !== undefined,
    };
    const call = APPEND.run(this.redis, ...this.appendArguments(batch, sealed, base, growth));
    this.inFlight.push(flight);
    void this.complete(flight, call);
  }

  /** Settles batches in doubt, and waits as the last reply to a batch that lost said. */
  private async beforeResend(batch: Batch): Promise<void> {
    if (this.doubtful.length > 0) await this.settleDoubtful(Math.max(1, batch.deadline - Date.now()));
    if (this.frontier?.size !== this.head.seq && !this.settings.withoutTree)
      await this.readFrontier(batch.deadline);
    while (batch.waitMs > 0) {
      await sleep(Math.min(batch.waitMs, batch.deadline - Date.now()));
      await this.probe(batch);
    }
    // A conflict reply carries the new head, so the first retry goes at once, and so does
    // one that took the lease; the others back off.
    // Stryker disable next-line ArithmeticOperator: the back-off's length changes when a retry goes, not what it stores.
    if (batch.losses > 1 && !batch.leased) await sleep(Math.random() * Math.min(50, 2 ** batch.losses));
  }

  /** The tree's frontier at the head, read after the head moved under this writer; unknown if the tree lags. */
  private async readFrontier(deadline: number): Promise<void> {
    try {
      // A frontier carries its size: send() uses it only on a head of that seq.
      this.frontier = await withTimeout(
        this.tree.frontier(this.head.seq),
        deadline - Date.now(),
        'audit tree frontier',
      );
    } catch (err) {
      // The chain goes on without the tree's records; a catch-up hashes them in later.
      this.frontier = undefined;
      this.settings.logger.warn(
        { err },
        'audit tree frontier could not be read; appending without tree records',
      );
    }
  }

  /** Asks for the head and the lease without sending entries (nothing can be stored). */
  private async probe(batch: Batch): Promise<void> {
    this.assertCanSend(batch.deadline);
    const call = APPEND.run(this.redis, ...this.appendArguments(batch, [], this.head, undefined));
    const reply = (await withTimeout(call, batch.deadline - Date.now(), 'audit append probe')) as string[];
    const [status, seq, hash, wait, tree, frontier] = reply;
    if (status !== 'busy' && status !== 'conflict') throw refusal(status);
    this.moveHead({ seq: Number(seq), hash: String(hash) }, tree, frontier);
    batch.waitMs = status === 'busy' ? Number(wait) : 0;
  }

  /** Answers the batch's appends from the reply of its call, or queues it for another attempt. */
  private async complete(flight: Flight, call: Promise<unknown>): Promise<void> {
    const { batch } = flight;
    try {
      const stored = await this.outcome(flight, call);
      if (stored) {
        batch.appends.forEach((p, i) => p.resolve(stored[i] as AuditEntry));
        this.settings.onStored(stored);
      }
    } catch (err) {
      this.fail(batch, err);
    } finally {
      this.inFlight.splice(this.inFlight.indexOf(flight), 1);
      this.signal();
    }
  }

  /** The stored entries, or undefined when the batch lost the race and waits in `retry`. */
  private async outcome(flight: Flight, call: Promise<unknown>): Promise<AuditEntry[] | undefined> {
    const { batch, entries } = flight;
    const doubt = { batchId: batch.id, firstId: (entries[0] as AuditEntry).id, count: entries.length };
    let reply: string[];
    try {
      reply = (await withTimeout(call, batch.deadline - Date.now(), 'audit append script')) as string[];
    } catch (err) {
      this.stalled = true;
      if (isDefiniteFailure(err)) {
        throw new AuditUnavailableError('Redis refused the audit append', { cause: err });
      }
      return this.settleAfterLostReply(doubt, err);
    }
    const [status, first, second] = reply;
    if (status === 'ok') {
      // Replies come in the order of the calls, so this is the newest head.
      this.head = flight.head;
      this.afterTreeGrew(flight, Number(second));
      this.waitingSinceMs = undefined;
      await this.waitForReplicas(batch.deadline);
      return entries;
    }
    this.stalled = true;
    if (status === 'landed') return this.readBack(Number(first), doubt);
    this.requeue(flight, reply);
    return undefined;
  }

  /** A reply that stored nothing: the batch waits in `retry` on the head Redis reported, or is refused. */
  private requeue({ batch, predicted }: Flight, reply: string[]): void {
    const [status, seq, hash, extra, tree, frontier] = reply;
    if (status !== 'conflict' && status !== 'busy') throw refusal(status);
    this.moveHead({ seq: Number(seq), hash: String(hash) }, tree, frontier);
    this.waitingSinceMs ??= Date.now() + this.clockOffsetMs;
    if (status === 'conflict' && !predicted) batch.losses += 1;
    if (batch.losses >= this.settings.maxAttempts) {
      throw new AuditUnavailableError(`audit append lost the race to other writers ${batch.losses} times`);
    }
    batch.leased = extra === 'lease';
    batch.waitMs = status === 'busy' ? Number(extra) : 0;
    const at = this.retry.findIndex((b) => b.order > batch.order);
    this.retry.splice(at < 0 ? this.retry.length : at, 0, batch);
  }

  /**
   * Another writer moved the head: the reply says where, with the tree's size and frontier,
   * which is this writer's frontier when the tree is level with the head.
   */
  private moveHead(head: ChainHead, tree: string | undefined, frontier: string | undefined): void {
    // Other writers only ever move the head forward from what this one stored.
    const wentBack = head.seq < this.head.seq || (head.seq === this.head.seq && head.hash !== this.head.hash);
    if (wentBack) this.settings.onRollback?.({ known: this.head, found: head });
    this.head = head;
    if (this.settings.withoutTree || Number(tree) !== head.seq || frontier === undefined) return;
    this.frontier = decodeFrontier(head.seq, frontier) ?? this.frontier;
  }

  /** The tree holds `leaves` after the stored batch: behind the head, it needs a catch-up. */
  private afterTreeGrew(flight: Flight, leaves: number): void {
    const behind = leaves !== flight.head.seq;
    this.frontier = behind ? undefined : flight.frontier;
    if (behind && !this.settings.withoutTree) this.settings.onTreeBehind?.();
  }

  private fail(batch: Batch, err: unknown): void {
    const error =
      err instanceof AuditUnavailableError
        ? err
        : new AuditUnavailableError('audit append failed', { cause: err });
    for (const p of batch.appends) p.reject(error);
  }

  /** Fails fast, without sending, when the bound is spent or Redis is not connected. */
  private assertCanSend(deadline: number): void {
    if (deadline - Date.now() <= 0) {
      throw new AuditUnavailableError(`audit append timed out after ${this.settings.appendTimeoutMs} ms`);
    }
    if (this.redis.status !== 'ready') {
      throw new AuditUnavailableError(`Redis is not connected (${this.redis.status})`);
    }
  }

  private appendArguments(
    batch: Batch,
    sealed: SealedEntry[],
    base: ChainHead,
    growth: TreeGrowth | undefined,
  ): [string[], (string | number | Buffer)[]] {
    const treeKey = growth?.firstKey ?? this.keys.treeChunk(0);
    const keys = [
      this.keys.head,
      this.keys.stream,
      this.keys.ids,
      this.keys.time,
      this.keys.cancelled(batch.id),
      this.keys.timeFloor,
      this.keys.timeCeiling,
      treeKey,
      growth?.lastKey ?? treeKey,
    ];
    const entries = this.entryArguments(sealed);
    keys.push(...entries.indexKeys);
    // The deadline travels in Redis's clock so the script can compare it with TIME.
    const redisDeadline = Math.floor(batch.deadline + this.clockOffsetMs);
    const args = [
      base.seq,
      base.hash,
      redisDeadline,
      batch.losses,
      this.writerId,
      sealed.length,
      // Stryker disable next-line StringLiteral: only a probe has no entries, and the script answers it before reading this.
      sealed.at(-1)?.entry.hash ?? '',
      // Stryker disable next-line StringLiteral: the script takes anything but a number as "since now".
      this.waitingSinceMs === undefined ? '' : Math.floor(this.waitingSinceMs),
      growth?.records ?? '',
      growth?.firstPosition ?? 0,
      // Stryker disable next-line StringLiteral: without tree records the script never reads the frontier.
      growth ? encodeFrontier(growth.frontier) : '',
      ...entries.args,
    ];
    return [keys, args];
  }

  /**
   * The batch's entries as the append script takes them: ids, stored forms, their lengths
   * and timestamps as four arguments, then each distinct index key's batch positions.
   */
  private entryArguments(sealed: readonly SealedEntry[]): { indexKeys: string[]; args: (string | Buffer)[] } {
    const ids: string[] = [];
    const stored: Buffer[] = [];
    const lengths: number[] = [];
    const times: number[] = [];
    // Each distinct index key once, with the batch positions (1-based) of its entries.
    const positions = new Map<string, string>();
    sealed.forEach((one, i) => {
      ids.push(one.entry.id);
      stored.push(one.stored);
      lengths.push(one.stored.length);
      times.push(Date.parse(one.entry.timestamp));
      for (const key of indexKeysOf(this.keys, one.entry)) {
        const before = positions.get(key);
        positions.set(key, before === undefined ? String(i + 1) : `${before} ${i + 1}`);
      }
    });
    return {
      indexKeys: [...positions.keys()],
      args: [ids.join(' '), Buffer.concat(stored), lengths.join(' '), times.join(' '), ...positions.values()],
    };
  }

  /** After a lost reply: the batch is either found stored (success) or tombstoned (a clean rejection). */
  private async settleAfterLostReply(batch: DoubtfulBatch, cause: unknown): Promise<AuditEntry[]> {
    let stored: AuditEntry[] | undefined;
    try {
      stored = await this.settleOnce(batch, this.settings.settleTimeoutMs);
    } catch (err) {
      this.doubtful.push(batch);
      throw new AuditAppendInDoubtError(
        'audit append got no reply and could not be settled; it may be stored',
        {
          cause: err,
        },
      );
    }
    if (stored) return stored;
    throw new AuditUnavailableError('audit append got no reply in time; the batch was cancelled', { cause });
  }

  /** Returns the stored entries, or undefined when the batch is now cancelled for good. */
  private async settleOnce(batch: DoubtfulBatch, timeoutMs: number): Promise<AuditEntry[] | undefined> {
    const call = SETTLE.run(
      this.redis,
      [this.keys.ids, this.keys.cancelled(batch.batchId)],
      [batch.firstId, this.settings.cancelTtlSeconds],
    );
    const [status, first] = (await withTimeout(call, timeoutMs, 'audit settle script')) as string[];
    if (status !== 'landed') return undefined;
    const stored = await this.readBack(Number(first), batch);
    this.settings.logger.warn(
      { batch: batch.batchId, seqs: stored.map((e) => e.seq) },
      'audit entries whose append reply was lost are stored in the chain',
    );
    return stored;
  }

  private async readBack(firstSeq: number, batch: DoubtfulBatch): Promise<AuditEntry[]> {
    const items = await this.redis.xrange(
      this.keys.stream,
      streamId(firstSeq),
      streamId(firstSeq + batch.count - 1),
    );
    const entries = items.map(([, fields]) => decodeEntryOrThrow(entryField(fields) ?? ''));
    if (entries.length !== batch.count || entries[0]?.id !== batch.firstId) {
      throw new AuditUnavailableError(`audit batch ${batch.batchId} is stored but cannot be read back`);
    }
    const last = headOf(entries);
    if (last.seq > this.head.seq) this.head = last;
    return entries;
  }

  /** WAIT for replicas; entries are on the primary already, so a shortfall leaves them in doubt. */
  private async waitForReplicas(deadline: number): Promise<void> {
    const wanted = this.settings.waitReplicas;
    if (!wanted || wanted.count <= 0) return;
    let acknowledged: number;
    try {
      const call = this.redis.wait(wanted.count, wanted.timeoutMs);
      acknowledged = await withTimeout(
        call,
        Math.max(wanted.timeoutMs, deadline - Date.now()) + 1000,
        'WAIT',
      );
    } catch (err) {
      throw new AuditAppendInDoubtError('audit entries are stored but WAIT for replicas failed', {
        cause: err,
      });
    }
    if (acknowledged < wanted.count) {
      throw new AuditAppendInDoubtError(
        `audit entries are stored but only ${acknowledged} of ${wanted.count} replicas confirmed them`,
      );
    }
  }
}

function sealBatch(appends: readonly PendingAppend[], head: ChainHead): SealedEntry[] {
  let previous = head;
  return appends.map(({ event, id }) => {
    const sealed = sealForStorage(event, id, previous);
    previous = sealed.entry;
    return sealed;
  });
}

function headOf(entries: readonly AuditEntry[]): ChainHead {
  const last = entries[entries.length - 1] as AuditEntry;
  return { seq: last.seq, hash: last.hash };
}

/** A reply of the append script that stored nothing and must not be retried. */
function refusal(status: string | undefined): AuditUnavailableError {
  if (status === 'expired') return new AuditUnavailableError('audit append reached Redis after its deadline');
  if (status === 'headless') {
    return new AuditUnavailableError(
      'audit chain head is missing while the stream has entries; refusing to fork',
    );
  }
  return new AuditUnavailableError(`audit append was refused (${String(status)})`);
}

/** The server answered with an error (nothing was written), or the command was never sent. */
function isDefiniteFailure(err: unknown): boolean {
  // Stryker disable next-line BooleanLiteral: ioredis and withTimeout reject with Errors only.
  if (!(err instanceof Error)) return false;
  return err.name === 'ReplyError' || err.message.startsWith(NOT_SENT_MESSAGE);
}
