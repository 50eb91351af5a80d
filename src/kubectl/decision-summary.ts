import type { DecisionView } from './pending-table.js';
import { field, reviewLines, type DecisionTrail } from './trail-view.js';

/** GET /governance/decisions/:id (decisionView in src/api/routes/governance.ts), as `get` prints it. */
export interface DecisionSummary extends DecisionView {
  risk_score: number;
  audit: DecisionView['audit'] & {
    principal: string;
    policy_matched: string | null;
    reviews: DecisionTrail['review']['reviews'];
  };
}

/**
 * What `get` shows a caller without audit:read (a reviewer's usual scopes): the decision
 * and its review, without the request's parameters and the evaluation the trail holds.
 */
export function renderDecisionSummary(view: DecisionSummary, now: Date): string {
  const { audit } = view;
  const lines = [
    field('Decision', view.decision_id),
    field('Outcome', view.outcome),
    field('Reason', view.reason),
    field('Time', view.timestamp),
    field('Actor', audit.actor_id),
    field('Capability', audit.capability),
    field('Proposed by', audit.principal),
    field('Risk', String(view.risk_score)),
    field('Policy', audit.policy_matched ?? 'none'),
    ...reviewLines({ status: audit.status, expires_at: audit.expires_at, reviews: audit.reviews }, now),
  ];
  return lines.join('\n') + '\n';
}
