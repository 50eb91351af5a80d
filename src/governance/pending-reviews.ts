import type { AuditEntry, AuditLog } from '../audit/audit-log.js';
import { everyEntry } from '../audit/query-pages.js';
import { MAX_REVIEW_TTL_SECONDS, recordNamespace } from '../model/index.js';
import { REVIEWED_OUTCOMES, verdictStatus, type DecisionData, type ReviewData } from './decision-record.js';

/**
 * A decision waiting for a reviewer (or for its expiry to be recorded). Only what listing
 * and expiry read: under an escalation storm tens of thousands wait at once, and whole
 * entries would hold over a kilobyte each (the record itself is read from the log).
 */
export interface WaitingDecision {
  decisionId: string;
  /** The seq of its governance.decision entry: listing order and cursor. */
  seq: number;
  expiresAtMs: number;
  /** The namespace it belongs to (model/record-namespace.ts), undefined for none. */
  namespace: string | undefined;
}

const CLOCK_SKEW_MARGIN_MS = 3_600_000;

/**
 * The decisions that wait for a reviewer, kept from the audit log's live feed (entries of
 * every replica), so that listing them or finding the ones past their deadline reads no
 * log. A decision leaves when a verdict (approve, deny, expire) is recorded for it.
 */
export class PendingReviews {
  private readonly waiting = new Map<string, WaitingDecision>();

  /**
   * Takes in one entry of the log. The feed brings a decision before its verdict, and the
   * seed reads whole trails, so either order of the two leaves the right state.
   */
  observe(entry: AuditEntry): void {
    const decisionId = entry.decision_id;
    if (decisionId === null) return;
    if (entry.event_type === 'governance.decision') {
      const expiresAt = (entry.data as unknown as DecisionData).expires_at;
      if (expiresAt === undefined) return;
      this.waiting.set(decisionId, {
        decisionId,
        seq: entry.seq,
        expiresAtMs: Date.parse(expiresAt),
        namespace: recordNamespace(entry),
      });
    } else if (entry.event_type === 'governance.review') {
      // A used confirmation does not end the wait (the approval did).
      if (!verdictStatus((entry.data as unknown as ReviewData).action)) return;
      this.waiting.delete(decisionId);
    }
  }

  /**
   * Reads the decisions that may still wait from the log: those that needed review within
   * the longest review TTL before now, then the verdicts given since, which end a wait.
   * Two scans, not a trail read per decision (an escalation storm leaves tens of
   * thousands waiting). Subscribe to the feed first, so nothing appended meanwhile is
   * missed: a verdict the feed brought before its decision was seeded is read again here.
   */
  async seed(audit: AuditLog, now: Date, defaultTtlSeconds: number): Promise<void> {
    const horizonMs = Math.max(MAX_REVIEW_TTL_SECONDS, defaultTtlSeconds) * 1000;
    const since = new Date(now.getTime() - horizonMs).toISOString();
    for (const outcome of REVIEWED_OUTCOMES) {
      for await (const entry of everyEntry(audit, { event_type: 'governance.decision', outcome, since })) {
        this.observe(entry);
      }
    }
    // Replicas' clocks differ a little: a verdict stamped just before its decision still counts.
    const verdictsSince = new Date(now.getTime() - horizonMs - CLOCK_SKEW_MARGIN_MS).toISOString();
    for await (const entry of everyEntry(audit, { event_type: 'governance.review', since: verdictsSince })) {
      this.observe(entry);
    }
  }

  /** Every waiting decision, oldest first. */
  list(): WaitingDecision[] {
    return [...this.waiting.values()].sort((a, b) => a.seq - b.seq);
  }

  /** Those whose deadline has passed at nowMs, earliest deadline first. */
  due(nowMs: number): WaitingDecision[] {
    return this.list()
      .filter((w) => w.expiresAtMs <= nowMs)
      .sort((a, b) => a.expiresAtMs - b.expiresAtMs);
  }

  /** Drops a decision that no longer waits (its verdict or expiry is recorded). */
  settle(decisionId: string): void {
    this.waiting.delete(decisionId);
  }

  get size(): number {
    return this.waiting.size;
  }
}

/**
 * The oldest decision the log shows waiting for a verdict, read as a server reads them at
 * start: an archive run keeps it (and all after it), so that it stays reviewable and expires.
 */
export async function oldestWaitingDecision(
  audit: AuditLog,
  now: Date,
  defaultTtlSeconds: number,
): Promise<WaitingDecision | undefined> {
  const pending = new PendingReviews();
  await pending.seed(audit, now, defaultTtlSeconds);
  return pending.list()[0];
}
