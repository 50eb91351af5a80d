import type { EventType } from '../model/index.js';
import type { AuditEventInput } from './audit-log.js';

/**
 * An event about the log itself (an archive run, a loss found), neither a decision nor a
 * configuration change: the decision fields are null, `actor_id` says who caused it.
 */
export function systemEvent(
  eventType: EventType,
  timestamp: string,
  actorId: string | null,
  data: Record<string, unknown>,
): AuditEventInput {
  return {
    event_type: eventType,
    timestamp,
    actor_id: actorId,
    capability: null,
    outcome: null,
    risk_score: null,
    decision_id: null,
    policies_evaluated: [],
    policy_matched: null,
    data,
  };
}
