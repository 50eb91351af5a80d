import { AuditUnavailableError } from '../../model/index.js';
import type { Checkpoint, CheckpointStore } from '../audit-log.js';
import type { AuditLogger } from '../audit-logger.js';
import { type CheckpointSigner, saveCheckpoint } from '../checkpoint-signer.js';

export interface CheckpointSettings {
  store: CheckpointStore;
  /** Checkpoint when the head is this many entries past the last checkpoint. */
  everyEntries: number;
  /** Checkpoint a moved head at least this often (0 disables the timer). */
  intervalMs: number;
  /** Only the leader writes checkpoints; every replica reads them. */
  isLeader: () => boolean;
  /** How long a listed set of checkpoints is reused before reading the store again. */
  listCacheMs: number;
  /** Signs checkpoints of the Merkle tree when the log has a signing key. */
  signer?: CheckpointSigner;
}

/**
 * Decides when to checkpoint the chain head and keeps a cached view of the stored
 * checkpoints. Saving is off the append path: a failed save is logged, never fatal.
 */
export class Checkpointer {
  private cached: { at: number; checkpoints: Checkpoint[] } | undefined;
  private lastSavedSeq = 0;
  private saving: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: CheckpointSettings,
    private readonly logger: AuditLogger,
  ) {}

  async start(readHead: () => Promise<Checkpoint | undefined>): Promise<void> {
    try {
      const existing = await this.list(); // nothing cached yet: read from the store
      this.lastSavedSeq = existing[existing.length - 1]?.seq ?? 0;
    } catch (err) {
      // Checkpoints protect verification, they do not gate appends: start without them.
      this.logger.warn({ err }, 'audit checkpoints could not be read; will retry on use');
    }
    if (this.settings.intervalMs > 0) {
      this.timer = setInterval(() => {
        readHead().then(
          (head) => head && this.offer(head, true),
          (err: unknown) => this.logger.warn({ err }, 'audit checkpoint timer could not read the chain head'),
        );
      }, this.settings.intervalMs);
      this.timer.unref();
    }
  }

  /** A new head is known; saves it when due (or whenever it moved, for `force`). */
  offer(head: Checkpoint, force = false): void {
    if (!this.settings.isLeader() || head.seq <= this.lastSavedSeq) return;
    if (!force && head.seq - this.lastSavedSeq < this.settings.everyEntries) return;
    this.lastSavedSeq = head.seq;
    this.saving = this.saving.then(async () => {
      try {
        await saveCheckpoint(this.settings.store, head, this.settings.signer, this.logger);
        this.cached = undefined;
      } catch (err) {
        this.logger.warn({ err, seq: head.seq }, 'audit checkpoint could not be saved');
      }
    });
  }

  /** Retained checkpoints, oldest first. */
  async list(fresh = false): Promise<Checkpoint[]> {
    const now = Date.now();
    if (!fresh && this.cached && now - this.cached.at < this.settings.listCacheMs)
      return this.cached.checkpoints;
    let listed: Checkpoint[];
    try {
      listed = await this.settings.store.list();
    } catch (err) {
      // A stale list still bounds verification; only with none at all is this an error.
      if (!this.cached) {
        throw new AuditUnavailableError('audit checkpoints could not be read from their store', {
          cause: err,
        });
      }
      this.logger.warn({ err }, 'audit checkpoints could not be read; using the last list');
      return this.cached.checkpoints;
    }
    const checkpoints = [...listed].sort((a, b) => a.seq - b.seq);
    this.cached = { at: now, checkpoints };
    return checkpoints;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer); // undefined when there is no timer: a no-op
    this.timer = undefined;
    await this.saving;
  }
}
