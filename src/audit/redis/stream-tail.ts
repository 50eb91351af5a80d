import type { Redis } from 'ioredis';
import type { AuditEntry } from '../audit-log.js';
import type { SealedEntry } from '../chain.js';
import { decodeEntry, entryField } from './entry-codec.js';
import type { AuditLogger } from '../audit-logger.js';
import { sleep, withTimeout } from './timeout.js';

const BLOCK_MS = 1000;
const RETRY_DELAY_MS = 1000;
const STOP_WAIT_MS = 2000;
/** Sealed entries kept for the feed at most: far more than one replica has in flight. */
export const MAX_EXPECTED = 10_000;

/**
 * Live feed of the stream for subscribers: entries appended by any replica, in chain
 * order. It runs its own blocking connection only while someone listens.
 */
export class StreamTail {
  private readonly listeners = new Set<(entry: AuditEntry) => void>();
  private connection: Redis | undefined;
  private loop: Promise<void> | undefined;
  /**
   * Entries this replica is storing, by the seq they were sealed for. When the feed reads
   * the very same bytes at that seq, it hands on this entry instead of parsing them again
   * (3 KB of garbage per entry); anything else at that seq (a lost race, a failover) is
   * parsed as any other replica's entry.
   */
  private readonly expected = new Map<number, SealedEntry>();

  /**
   * @param streamEnd the stream's last id, asked on the connection that appends: Redis
   *   answers it before any append this replica sends after subscribe(), so a subscriber
   *   sees every entry it could have caused, even before the feed's own connection is up.
   */
  constructor(
    private readonly connect: () => Redis,
    private readonly stream: string,
    private readonly logger: AuditLogger,
    private readonly streamEnd: () => Promise<string>,
  ) {}

  subscribe(listener: (entry: AuditEntry) => void): () => void {
    this.listeners.add(listener);
    if (!this.connection) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) void this.stop();
    };
  }

  /** Entries about to be sent: see `expected`. Only while someone listens, as only reading clears them. */
  expect(sealed: readonly SealedEntry[]): void {
    if (!this.connection) return;
    for (const one of sealed) this.expected.set(one.entry.seq, one);
    // Oldest first in a Map's order: those the feed would have read long ago.
    for (const seq of this.expected.keys()) {
      if (this.expected.size <= MAX_EXPECTED) break;
      this.expected.delete(seq);
    }
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.expected.clear();
    connection?.disconnect();
    // A read queued while Redis is away may never be answered once its connection is
    // closed: the loop then ends whenever it is, and stopping does not wait for it.
    // Stryker disable next-line StringLiteral: the timeout's message is dropped here.
    await withTimeout(this.loop ?? Promise.resolve(), STOP_WAIT_MS, 'the audit live feed').catch(
      () => undefined,
    );
  }

  private start(): void {
    const end = this.streamEnd();
    const connection = this.connect();
    this.connection = connection;
    this.loop = this.follow(connection, end);
  }

  private async follow(connection: Redis, end: Promise<string>): Promise<void> {
    // Unknown (Redis away): the first read asks again, on the feed's connection.
    let lastId: string | undefined = await end.catch(() => undefined);
    while (this.connection === connection) {
      try {
        lastId = await this.readOnce(connection, lastId);
      } catch (err) {
        if (this.connection !== connection) return;
        this.logger.warn({ err }, 'audit live feed could not read the stream; retrying');
        await sleep(RETRY_DELAY_MS);
      }
    }
  }

  /** One blocking read after lastId; returns the id to continue from. */
  private async readOnce(connection: Redis, lastId: string | undefined): Promise<string> {
    // An explicit id, not '$': entries appended between two XREADs must not be skipped.
    const from = lastId ?? (await lastStreamId(connection, this.stream));
    // As bytes: an entry this replica stored is compared, not decoded.
    const reply = await connection.xreadBuffer('COUNT', 100, 'BLOCK', BLOCK_MS, 'STREAMS', this.stream, from);
    const items = reply?.[0]?.[1] ?? [];
    for (const [id, fields] of items) this.emit(seqOf(id), entryField(fields));
    const last = items[items.length - 1]?.[0];
    if (last === undefined) return from;
    const lastSeq = seqOf(last);
    for (const seq of this.expected.keys()) if (seq <= lastSeq) this.expected.delete(seq);
    return last.toString('latin1');
  }

  private emit(seq: number, stored: Buffer | undefined): void {
    const mine = this.expected.get(seq);
    let entry: AuditEntry | { invalid: string } | undefined;
    if (mine !== undefined && stored !== undefined && stored.equals(mine.stored)) entry = mine.entry;
    else entry = stored === undefined ? undefined : decodeEntry(stored.toString('utf8'));
    if (!entry || 'invalid' in entry) return;
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch (err) {
        this.logger.warn({ err, seq: entry.seq }, 'audit subscriber threw; ignored');
      }
    }
  }
}

/** The seq of a stream id `<seq>-0`. */
function seqOf(id: Buffer): number {
  return Number.parseInt(id.toString('latin1'), 10);
}

export async function lastStreamId(connection: Redis, stream: string): Promise<string> {
  return (await connection.xrevrange(stream, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
}
