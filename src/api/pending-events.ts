import type { AuditEntry } from '../audit/audit-log.js';
import { needsReview, verdictStatus, type ReviewData } from '../governance/decision-record.js';
import type { StreamedEvent } from './event-stream.js';

/**
 * What the live pending queue (GET /governance/pending as text/event-stream) says of an
 * audit entry: `decision.pending` when a decision starts waiting, `decision.settled` when
 * a review or its expiry ends the wait; nothing else. Ids and status only: the scope is
 * governance:read, and a client fetches what it shows.
 */
export function pendingQueueEvent(entry: AuditEntry): StreamedEvent | undefined {
  if (!entry.decision_id) return undefined;
  if (entry.event_type === 'governance.decision' && entry.outcome && needsReview(entry.outcome))
    return {
      id: entry.seq,
      event: 'decision.pending',
      data: { decision_id: entry.decision_id, outcome: entry.outcome },
    };
  if (entry.event_type !== 'governance.review') return undefined;
  const status = verdictStatus((entry.data as unknown as ReviewData).action);
  return status
    ? { id: entry.seq, event: 'decision.settled', data: { decision_id: entry.decision_id, status } }
    : undefined;
}
