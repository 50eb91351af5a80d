import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditEntry, AuditLog, ChainBreak } from '../audit/audit-log.js';
import type { DeliveryCursors } from './delivery-cursors.js';
import {
  chainBrokenNotification,
  notificationOf,
  notifies,
  type Notification,
  type NotificationType,
} from './notification.js';
import {
  ReceiverQueue,
  type DeliveryResult,
  type QueuedNotification,
  type ReceiverSettings,
} from './receiver-queue.js';

export interface NotifierDeps {
  audit: AuditLog;
  receivers: ReceiverSettings[];
  cursors: DeliveryCursors;
  /** Only the leader delivers, so each receiver hears of each event once. */
  isLeader: () => boolean;
  onLeadership: (listener: (leading: boolean) => void) => () => void;
  clock: () => Date;
  logger: Logger;
  onResult: (type: NotificationType, result: DeliveryResult) => void;
  /** How often settled progress is saved. */
  saveIntervalMs: number;
}

const CATCH_UP_PAGE = 200;

/** A receiver's id: a digest of its URL (which may hold a token, so it is never logged). */
export function receiverId(url: string): string {
  return hash('sha256', url, 'hex').slice(0, 16);
}

/**
 * Tells webhook receivers about decisions that wait for review and their verdicts. The
 * audit log is the outbox: the notifications are read from its entries, and each
 * receiver's progress (the seq it has been told through) is saved, so what a receiver
 * missed while it was down, or while Arbiter restarted, is caught up from the log.
 * Deliveries run behind the decisions and never delay or change one.
 */
export class Notifier {
  private queues: ReceiverQueue[] = [];
  private active = false;
  /** Feed entries that came while catching up; handled after it, in order. */
  private buffered: AuditEntry[] | undefined;
  /** The highest seq handed to the queues: catch-up and feed overlap. */
  private handledThrough = 0;
  /** Notifications are built one at a time so they reach the queues in chain order. */
  private building: Promise<void> = Promise.resolve();
  private readonly unsubscribe: Array<() => void> = [];
  private saver: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private dirty = false;
  private transition: Promise<void> = Promise.resolve();
  private readonly brokenSeen = new Set<number>();

  constructor(private readonly deps: NotifierDeps) {}

  start(): void {
    this.unsubscribe.push(this.deps.audit.subscribe((entry) => this.onEntry(entry)));
    this.unsubscribe.push(this.deps.onLeadership((leading) => this.lead(leading)));
    this.saver = setInterval(() => void this.save(), this.deps.saveIntervalMs);
    this.saver.unref();
    if (this.deps.isLeader()) this.lead(true);
  }

  /** Resolves once the notifier delivers (tests, startup): catch-up done. */
  whenSettled(): Promise<void> {
    return this.transition;
  }

  /**
   * Verification found the chain broken: told once per break, by the leader (every
   * replica verifies, so the leader finds it too).
   */
  chainBroken(broken: ChainBreak): void {
    if (this.brokenSeen.has(broken.seq)) return;
    this.brokenSeen.add(broken.seq);
    const now = this.deps.clock();
    const item = {
      notification: chainBrokenNotification(broken, now),
      seq: null,
      deadlineMs: this.deadline(now),
    };
    this.transition = this.transition.then(() => {
      if (this.active) this.push(item);
    });
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    clearInterval(this.saver);
    clearTimeout(this.retry);
    this.lead(false);
    await this.transition;
    await this.deps.cursors.close();
  }

  private lead(leading: boolean): void {
    this.transition = this.transition
      .then(() => (leading ? this.activate() : this.deactivate()))
      .catch((err: unknown) => {
        // Progress or the log unreadable (Redis away): nothing is lost, it is all in the log.
        this.deps.logger.warn({ err }, 'notifications could not start; retrying');
        this.active = false;
        this.buffered = undefined;
        this.queues = [];
        this.retry = setTimeout(() => {
          if (this.deps.isLeader() && this.unsubscribe.length > 0) this.lead(true);
        }, this.deps.saveIntervalMs * 5);
        this.retry.unref();
      });
  }

  private async activate(): Promise<void> {
    if (this.active) return;
    this.buffered = [];
    this.active = true;
    const saved = await this.deps.cursors.load();
    const head = (await this.deps.audit.head()).seq;
    this.queues = this.deps.receivers.map((receiver) => {
      const id = receiverId(receiver.url);
      // A receiver seen for the first time hears from now on, not the log's history.
      return new ReceiverQueue(id, receiver, saved.get(id) ?? head, {
        result: this.deps.onResult,
        settled: () => (this.dirty = true),
        logger: this.deps.logger,
        nowMs: () => this.deps.clock().getTime(),
      });
    });
    this.dirty = this.queues.some((q) => !saved.has(q.id));
    await this.catchUp(Math.min(...this.queues.map((q) => q.cursor)));
    const buffered = this.buffered;
    this.buffered = undefined;
    for (const entry of buffered) this.onEntry(entry);
    for (const queue of this.queues) queue.start();
    this.deps.logger.info(
      { receivers: this.queues.map((q) => ({ id: q.id, cursor: q.cursor, queued: q.length })) },
      'notifications: delivering',
    );
  }

  private async deactivate(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    await Promise.all(this.queues.map((q) => q.stop()));
    await this.save();
    this.queues = [];
    this.handledThrough = 0;
  }

  /** Reads what the receivers have not been told, within the retry window, from the log. */
  private async catchUp(after: number): Promise<void> {
    const since = new Date(this.deps.clock().getTime() - this.retryWindowMs()).toISOString();
    const found = new Map<number, AuditEntry>();
    const filters = [
      { event_type: 'governance.decision' as const, outcome: 'ESCALATE' as const },
      { event_type: 'governance.decision' as const, outcome: 'REQUIRE_CONFIRMATION' as const },
      { event_type: 'governance.review' as const },
    ];
    for (const filter of filters) {
      let cursor: number | null = after;
      while (cursor !== null) {
        const page = await this.deps.audit.query({
          ...filter,
          since,
          order: 'asc',
          limit: CATCH_UP_PAGE,
          after: cursor,
        });
        for (const entry of page.entries) found.set(entry.seq, entry);
        cursor = page.next;
      }
    }
    for (const entry of [...found.values()].sort((a, b) => a.seq - b.seq)) await this.handle(entry);
  }

  private onEntry(entry: AuditEntry): void {
    if (!this.active) return;
    if (this.buffered) {
      this.buffered.push(entry);
      return;
    }
    this.building = this.building.then(() =>
      this.handle(entry).catch((err: unknown) =>
        this.deps.logger.error({ err, seq: entry.seq }, 'notification could not be built; skipped'),
      ),
    );
  }

  private async handle(entry: AuditEntry): Promise<void> {
    if (entry.seq <= this.handledThrough || !notifies(entry)) return;
    this.handledThrough = entry.seq;
    const decision =
      entry.event_type === 'governance.decision'
        ? entry
        : (await this.deps.audit.byDecision(entry.decision_id ?? '')).find(
            (e) => e.event_type === 'governance.decision',
          );
    if (!decision) return;
    const notification: Notification = notificationOf(entry, decision);
    this.push({ notification, seq: entry.seq, deadlineMs: this.deadline(new Date(entry.timestamp)) });
  }

  private push(item: QueuedNotification): void {
    for (const queue of this.queues) queue.push(item);
  }

  private deadline(from: Date): number {
    return from.getTime() + this.retryWindowMs();
  }

  private retryWindowMs(): number {
    return Math.max(0, ...this.deps.receivers.map((r) => r.retryWindowMs));
  }

  private async save(): Promise<void> {
    if (!this.dirty || this.queues.length === 0) return;
    this.dirty = false;
    try {
      await this.deps.cursors.save(new Map(this.queues.map((q) => [q.id, q.cursor])));
    } catch (err) {
      this.dirty = true;
      this.deps.logger.warn({ err }, 'notification progress not saved; retrying');
    }
  }
}
