import type { IndexSnapshot } from '../index/index.js';
import { recordNamespace, riskLevelAtMost, type Evaluation } from '../model/index.js';

/** What a review weighs of a decision, as it was recorded. */
export interface ReviewedDecision {
  actorId: string;
  /** The decision's top-level namespace, when it carries one. */
  namespace?: string | null;
  evaluation: Partial<Pick<Evaluation, 'tier' | 'risk_override' | 'capability_risk_level'>>;
}

/**
 * The namespace whose reviewers may settle this escalation too (a RoleBinding there), or
 * undefined when only cluster reviewers may: the actor's namespace, when the namespace
 * tier or the risk override escalated it and the capability's risk level is at most what
 * the namespace's Delegation lets its reviewers settle (`reviewers.maxRiskLevel`). Whatever
 * the decision does not record fails closed: cluster reviewers only.
 */
export function reviewNamespace(
  decision: ReviewedDecision,
  snapshot: Pick<IndexSnapshot, 'delegationOf'>,
): string | undefined {
  const namespace = recordNamespace({ namespace: decision.namespace ?? null, actor_id: decision.actorId });
  if (namespace === undefined) return undefined;
  const { tier, risk_override: riskOverride, capability_risk_level: level } = decision.evaluation;
  if (tier !== 'namespace' && riskOverride !== true) return undefined;
  const allowed = snapshot.delegationOf(namespace)?.spec.reviewers?.maxRiskLevel;
  if (level === undefined || allowed === undefined) return undefined;
  return riskLevelAtMost(level, allowed) ? namespace : undefined;
}
