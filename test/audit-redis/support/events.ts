import type { AuditEventInput } from '../../../src/audit/audit-log.js';

/** A governance.decision event; fields vary with n so filters have something to select. */
export function decisionEvent(n: number, overrides: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    event_type: 'governance.decision',
    timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
    actor_id: `agent-${n % 3}`,
    capability: n % 2 === 0 ? 'db.read' : 'db.write',
    outcome: n % 4 === 0 ? 'DENY' : 'ALLOW',
    risk_score: 0.25,
    decision_id: `dec-${n}`,
    policies_evaluated: ['p1'],
    policy_matched: null,
    data: { n },
    ...overrides,
  };
}
