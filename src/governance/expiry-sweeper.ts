import type { Logger } from 'pino';
import type { AuditEntry } from '../audit/audit-log.js';
import type { ReplicaClaims } from '../redis/replica-claims.js';
import type { PendingReviews } from './pending-reviews.js';

/** Long enough for one expiry to be written; after it, a failed writer's claim lapses. */
const CLAIM_TTL_MS = 30_000;

export interface ExpirySweeperDeps {
  pending: PendingReviews;
  /** Records the expiry of a decision past its deadline (DecisionService.recordExpiry). */
  recordExpiry(decisionId: string): Promise<AuditEntry | undefined>;
  clock: () => Date;
  /** Only the leader looks for overdue decisions. */
  isLeader: () => boolean;
  /**
   * And a claim per decision makes each expiry written once even when two replicas
   * believe they lead for a moment (a Lease handover, or embedded replicas on one Redis).
   */
  claims: ReplicaClaims;
  logger: Logger;
  intervalMs: number;
  /** Told of every expiry written (metrics). */
  onExpired?: () => void;
}

/**
 * Expires pending decisions when their deadline passes, whether or not anyone asks about
 * them: the expiry is an audit entry (and so a decision.expired notification) within
 * one interval of the deadline.
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly deps: ExpirySweeperDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.deps.logger.warn({ err }, 'expiring pending decisions failed; retrying'),
        )
        .finally(() => (this.sweeping = undefined));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One pass: writes the expiries that are due; resolves with how many it wrote. */
  async sweep(): Promise<number> {
    if (!this.deps.isLeader()) return 0;
    let written = 0;
    for (const waiting of this.deps.pending.due(this.deps.clock().getTime())) {
      if (!(await this.deps.claims.claim(`expiry:${waiting.decisionId}`, CLAIM_TTL_MS))) continue;
      const entry = await this.deps.recordExpiry(waiting.decisionId);
      // Written, or already decided (the feed brings the verdict): either way it waits no more.
      this.deps.pending.settle(waiting.decisionId);
      if (!entry) continue;
      written += 1;
      this.deps.onExpired?.();
      this.deps.logger.info(
        { decision_id: waiting.decisionId, audit_ref: entry.id },
        'pending decision expired: nobody reviewed it before its deadline',
      );
    }
    return written;
  }
}
