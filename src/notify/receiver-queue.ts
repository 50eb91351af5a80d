import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Notification } from './notification.js';
import { slackMessage } from './slack-message.js';
import { post } from './webhook-delivery.js';

export type NotifyFormat = 'json' | 'slack';

export interface ReceiverSettings {
  url: string;
  format: NotifyFormat;
  /** Signs each body (X-Arbiter-Signature) when set. */
  secret: Buffer | undefined;
  /** How long after its event a notification is still retried. */
  retryWindowMs: number;
  /** Bound on one POST. */
  timeoutMs: number;
  /** First wait after a failure; it doubles up to maxBackoffMs. */
  minBackoffMs: number;
  maxBackoffMs: number;
}

export interface QueuedNotification {
  notification: Notification;
  /** The audit entry it comes from; null for one that is not in the log (chain broken). */
  seq: number | null;
  /** Past this (ms since the epoch) it is given up on. */
  deadlineMs: number;
}

export type DeliveryResult = 'delivered' | 'retried' | 'dropped';

/**
 * One receiver's notifications, delivered in order, each retried with doubling waits
 * until its deadline. Never in the path of a decision: the queue only ever runs behind.
 */
export class ReceiverQueue {
  private readonly queue: QueuedNotification[] = [];
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopping = new AbortController();

  constructor(
    readonly id: string,
    private readonly settings: ReceiverSettings,
    /** The seq through which notifications are settled (delivered or given up on). */
    public cursor: number,
    private readonly observe: {
      result(type: Notification['type'], result: DeliveryResult): void;
      settled(receiver: ReceiverQueue): void;
      logger: Logger;
      nowMs(): number;
    },
  ) {}

  /** Queues a notification unless the receiver is past it already. */
  push(item: QueuedNotification): void {
    if (item.seq !== null && item.seq <= this.cursor) return;
    this.queue.push(item);
    this.wake?.();
  }

  get length(): number {
    return this.queue.length;
  }

  start(): void {
    this.stopping = new AbortController();
    this.loop ??= this.run().finally(() => (this.loop = undefined));
  }

  /** Stops after the POST under way; what is queued stays unsettled (the cursor says so). */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake?.();
    await this.loop;
    this.queue.length = 0;
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      const item = this.queue[0];
      if (!item) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      if (!(await this.deliver(item, signal))) return;
      this.queue.shift();
      if (item.seq !== null) this.cursor = Math.max(this.cursor, item.seq);
      this.observe.settled(this);
    }
  }

  /** Resolves true once the item is settled, false when stopped first. */
  private async deliver(item: QueuedNotification, signal: AbortSignal): Promise<boolean> {
    const body = JSON.stringify(
      this.settings.format === 'slack' ? slackMessage(item.notification) : item.notification,
    );
    const { type } = item.notification;
    const id = `${this.id}-${item.notification.audit_ref ?? item.notification.timestamp}`;
    for (let attempt = 0; ; attempt++) {
      const failure = await post({ ...this.settings, body, id, type });
      if (failure === undefined) {
        this.observe.result(type, 'delivered');
        return true;
      }
      const wait = Math.min(this.settings.maxBackoffMs, this.settings.minBackoffMs * 2 ** attempt);
      if (this.observe.nowMs() + wait > item.deadlineMs) {
        this.observe.result(type, 'dropped');
        this.observe.logger.error(
          { receiver: this.id, type, decision_id: item.notification.decision_id, failure },
          'notification dropped: the receiver did not take it within the retry window',
        );
        return true;
      }
      this.observe.result(type, 'retried');
      this.observe.logger.warn(
        { receiver: this.id, type, failure, retry_in_ms: wait },
        'notification not delivered; retrying',
      );
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        return false; // stopped
      }
    }
  }
}
