import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AuditUnavailableError } from '../../model/index.js';
import type { AuditEntry, AuditEventInput, ChainHead } from '../audit-log.js';
import { sealEntry } from '../chain.js';
import { APPEND_SCRIPT, SETTLE_SCRIPT } from './append-scripts.js';
import { decodeEntryOrThrow, encodeEntry, entryField, indexKeysOf } from './entry-codec.js';
import { AuditAppendInDoubtError } from './errors.js';
import type { AuditLogger } from '../audit-logger.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';
import { measureClockOffsetMs } from './redis-clock.js';
import { LuaScript } from './run-script.js';
import { sleep, withTimeout } from './timeout.js';

export interface ChainAppenderSettings {
  appendTimeoutMs: number;
  /** Bound on settling a batch whose reply was lost, after appendTimeoutMs. */
  settleTimeoutMs: number;
  maxBatchEntries: number;
  /** Compare-and-append attempts of one batch when other writers keep winning. */
  maxAttempts: number;
  waitReplicas?: { count: number; timeoutMs: number };
  /** How long a cancelled batch stays refused: longer than any command can sit in a socket. */
  cancelTtlSeconds: number;
  newId: () => string;
  logger: AuditLogger;
  /** Called with each stored batch, in chain order. */
  onStored: (entries: readonly AuditEntry[]) => void;
}

type EntryContent = Omit<AuditEntry, 'hash' | 'previous_hash' | 'seq'>;

interface PendingAppend {
  content: EntryContent;
  deadline: number;
  resolve: (entry: AuditEntry) => void;
  reject: (err: Error) => void;
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
 * Appends to the shared chain: group commit (appends waiting while a script call is in
 * flight go together in the next one), compare-and-append on the head, re-seal and
 * retry when another writer moved the head, and settling of calls whose reply was lost
 * so that a rejected append never lands later.
 */
export class ChainAppender {
  private queue: PendingAppend[] = [];
  private draining: Promise<void> | undefined;
  private doubtful: DoubtfulBatch[] = [];
  private clockOffsetMs = 0;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisAuditKeys,
    private head: ChainHead,
    private readonly settings: ChainAppenderSettings,
  ) {}

  append(event: AuditEventInput): Promise<AuditEntry> {
    if (Number.isNaN(Date.parse(event.timestamp))) {
      return Promise.reject(new TypeError(`audit event timestamp is not ISO 8601: ${event.timestamp}`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({
        content: { ...event, id: this.settings.newId() },
        deadline: Date.now() + this.settings.appendTimeoutMs,
        resolve,
        reject,
      });
      if (!this.draining) this.draining = this.drain();
    });
  }

  /** Measures Redis's clock against ours (on connect and after every reconnect). */
  async syncClock(): Promise<void> {
    this.clockOffsetMs = await measureClockOffsetMs(this.redis);
  }

  /** Resolves once every queued append has been answered. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
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

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.settings.maxBatchEntries);
        await this.commit(batch);
      }
    } finally {
      // Synchronous with the empty-queue check above: no append can slip in between.
      this.draining = undefined;
    }
  }

  private async commit(batch: PendingAppend[]): Promise<void> {
    const now = Date.now();
    const live = batch.filter((p) => {
      if (p.deadline > now) return true;
      p.reject(new AuditUnavailableError('audit append timed out while queued'));
      return false;
    });
    if (live.length === 0) return;
    try {
      const deadline = Math.min(...live.map((p) => p.deadline));
      const entries = await this.store(
        live.map((p) => p.content),
        deadline,
      );
      live.forEach((p, i) => p.resolve(entries[i] as AuditEntry));
      this.settings.onStored(entries);
    } catch (err) {
      const error =
        err instanceof AuditUnavailableError
          ? err
          : new AuditUnavailableError('audit append failed', { cause: err });
      for (const p of live) p.reject(error);
    }
  }

  private async store(contents: EntryContent[], deadline: number): Promise<AuditEntry[]> {
    if (this.doubtful.length > 0) await this.settleDoubtful(Math.max(1, deadline - Date.now()));
    const batchId = randomUUID();
    for (let attempt = 1; ; attempt += 1) {
      this.assertCanSend(deadline);
      const sealed = sealBatch(contents, this.head);
      const doubt = { batchId, firstId: (sealed[0] as AuditEntry).id, count: sealed.length };
      let reply: string[];
      try {
        const call = APPEND.run(this.redis, ...this.appendArguments(batchId, sealed, deadline, attempt));
        reply = (await withTimeout(call, deadline - Date.now(), 'audit append script')) as string[];
      } catch (err) {
        if (isDefiniteFailure(err)) {
          throw new AuditUnavailableError('Redis refused the audit append', { cause: err });
        }
        return this.settleAfterLostReply(doubt, err);
      }
      const [status, first, second, turn] = reply;
      if (status === 'ok') {
        this.head = headOf(sealed);
        await this.waitForReplicas(deadline);
        return sealed;
      }
      if (status === 'landed') return this.readBack(Number(first), doubt);
      if (status !== 'conflict') throw refusal(status);
      this.head = { seq: Number(first), hash: String(second) };
      if (attempt >= this.settings.maxAttempts) {
        throw new AuditUnavailableError(`audit append lost the race to other writers ${attempt} times`);
      }
      // The reply carries the new head, so the first retry goes at once, and so does one that
      // was given the next turn; the others back off.
      if (attempt > 1 && turn !== 'turn') await sleep(Math.random() * Math.min(50, 2 ** attempt));
    }
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
    batchId: string,
    sealed: AuditEntry[],
    deadline: number,
    attempt: number,
  ): [string[], (string | number)[]] {
    const keys = [
      this.keys.head,
      this.keys.stream,
      this.keys.ids,
      this.keys.time,
      this.keys.cancelled(batchId),
      this.keys.timeFloor,
      this.keys.timeCeiling,
    ];
    // The deadline travels in Redis's clock so the script can compare it with TIME.
    const redisDeadline = Math.floor(deadline + this.clockOffsetMs);
    const args: (string | number)[] = [this.head.seq, this.head.hash, redisDeadline, sealed.length];
    for (const entry of sealed) {
      const indexKeys = indexKeysOf(this.keys, entry);
      keys.push(...indexKeys);
      args.push(entry.id, encodeEntry(entry), entry.hash, Date.parse(entry.timestamp), indexKeys.length);
    }
    args.push(attempt);
    return [keys, args];
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

function sealBatch(contents: EntryContent[], head: ChainHead): AuditEntry[] {
  let previous = head;
  return contents.map((content) => {
    const entry = sealEntry(content, previous);
    previous = entry;
    return entry;
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
  if (!(err instanceof Error)) return false;
  return err.name === 'ReplyError' || err.message.startsWith(NOT_SENT_MESSAGE);
}
