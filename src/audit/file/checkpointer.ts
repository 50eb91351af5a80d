import type { CheckpointStore } from '../audit-log.js';
import type { AuditLogger } from '../audit-logger.js';
import { type CheckpointSigner, saveCheckpoint } from '../checkpoint-signer.js';

export interface CheckpointEvery {
  /** Checkpoint after this many new entries ... */
  entries: number;
  /** ... or after this many seconds, whichever comes first (only if the head moved). */
  seconds: number;
}

export interface HeadSnapshot {
  seq: number;
  hash: string;
  entry_id: string;
}

/**
 * Saves the log's head as a checkpoint every N entries or T seconds. Saves are serialised
 * and their failures logged: a missed checkpoint weakens detection but must never fail
 * an append.
 */
export class Checkpointer {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: CheckpointStore,
    private readonly every: CheckpointEvery,
    private readonly head: () => HeadSnapshot | undefined,
    private readonly now: () => Date,
    private readonly logger: AuditLogger,
    private lastSeq: number,
    private readonly signer?: CheckpointSigner,
    /** Makes what the checkpoint covers durable first (the tree file). */
    private readonly beforeSave: () => Promise<void> = () => Promise.resolve(),
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.checkpoint(), this.every.seconds * 1000);
    this.timer.unref();
  }

  /** Called after each durable batch with the new head. */
  afterAppend(head: HeadSnapshot): void {
    if (head.seq - this.lastSeq >= this.every.entries) void this.checkpoint(head);
  }

  /**
   * Schedules a checkpoint of this head (default: the current one) unless it is already
   * checkpointed. lastSeq moves when scheduled, so a slow save is not queued twice.
   */
  checkpoint(head: HeadSnapshot | undefined = this.head()): Promise<void> {
    if (!head || head.seq === this.lastSeq) return this.saving;
    this.lastSeq = head.seq;
    this.saving = this.saving.then(async () => {
      try {
        await this.beforeSave();
        await saveCheckpoint(
          this.store,
          { ...head, time: this.now().toISOString() },
          this.signer,
          this.logger,
        );
      } catch (err) {
        this.logger.warn({ err, seq: head.seq }, 'audit checkpoint could not be saved');
      }
    });
    return this.saving;
  }

  /** Stops the timer and writes a final checkpoint. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checkpoint();
  }
}
