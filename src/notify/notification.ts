import type { AuditEntry, ChainBreak } from '../audit/audit-log.js';
import type { DecisionData, ReviewData } from '../governance/decision-record.js';
import type { Outcome } from '../model/index.js';

export const NOTIFICATION_TYPES = [
  'decision.pending',
  'decision.approved',
  'decision.denied',
  'decision.expired',
  'audit.chain_broken',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/**
 * What a receiver is told. Fields that do not apply are null. Never the parameters of a
 * proposal: they may hold secrets, and the receiver is outside the audit log's trust.
 */
export interface Notification {
  type: NotificationType;
  decision_id: string | null;
  outcome: Outcome | null;
  actor_id: string | null;
  capability: string | null;
  reason: string | null;
  risk_score: number | null;
  expires_at: string | null;
  reviewer: string | null;
  timestamp: string;
  audit_ref: string | null;
}

const TYPE_OF_REVIEW: Partial<Record<ReviewData['action'], NotificationType>> = {
  approve: 'decision.approved',
  deny: 'decision.denied',
  expire: 'decision.expired',
};

/** Whether an entry makes a notification: a decision that waits for review, or a verdict on one. */
export function notifies(entry: AuditEntry): boolean {
  if (entry.event_type === 'governance.decision')
    return (entry.data as unknown as DecisionData).expires_at !== undefined;
  return entry.event_type === 'governance.review' && reviewType(entry) !== undefined;
}

function reviewType(entry: AuditEntry): NotificationType | undefined {
  return TYPE_OF_REVIEW[(entry.data as unknown as ReviewData).action];
}

/**
 * The notification of an entry for which `notifies` holds. A review's notification
 * repeats what its decision said (outcome, reason, risk, expiry): pass the decision entry.
 */
export function notificationOf(entry: AuditEntry, decision: AuditEntry): Notification {
  const data = decision.data as unknown as DecisionData;
  const isReview = entry !== decision;
  return {
    type: isReview ? reviewType(entry)! : 'decision.pending',
    decision_id: decision.decision_id,
    outcome: decision.outcome,
    actor_id: decision.actor_id,
    capability: decision.capability,
    reason: data.decision.reason,
    risk_score: decision.risk_score,
    expires_at: data.expires_at ?? null,
    reviewer: isReview ? (entry.data as unknown as ReviewData).reviewer : null,
    timestamp: entry.timestamp,
    audit_ref: entry.id,
  };
}

/** Verification found the chain broken at `broken`. */
export function chainBrokenNotification(broken: ChainBreak, now: Date): Notification {
  return {
    type: 'audit.chain_broken',
    decision_id: null,
    outcome: null,
    actor_id: null,
    capability: null,
    reason: `the audit chain does not hold at seq ${broken.seq}: ${broken.reason}`,
    risk_score: null,
    expires_at: null,
    reviewer: null,
    timestamp: now.toISOString(),
    audit_ref: broken.entry_id ?? null,
  };
}
