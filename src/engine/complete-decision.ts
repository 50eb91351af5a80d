import type { EngineDecision } from '../model/index.js';
import type { PreliminaryDecision } from './evaluate-proposal.js';
import type { RateLimitAdmission } from './rate-limiter.js';

/**
 * Finishes a preliminary decision with the rate limiter's answer. Over the limit is a
 * governance DENY (`rate_limited`), not a request error; the rate limit belongs to the
 * authority check, so the policies' verdict is dropped from the trail.
 */
export function completeDecision(
  preliminary: PreliminaryDecision,
  admission: RateLimitAdmission,
): EngineDecision {
  const { decision, rateLimit } = preliminary;
  if (!rateLimit) return decision;
  const admitted = typeof admission === 'boolean' ? admission : admission.admitted;
  if (admitted)
    return withRemaining(decision, typeof admission === 'boolean' ? undefined : admission.remaining);
  // Over the limit, the policies' verdict (what shadow policies would say, which tier decided) is not part of it.
  const { shadow_decision: _shadow, tier: _tier, ...evaluation } = decision.evaluation;
  return {
    outcome: 'DENY',
    reason:
      `Rate limit exceeded: actor ${preliminary.actorId} may propose ${preliminary.capability} ` +
      `at most ${rateLimit.maxRequests} time(s) per ${rateLimit.windowSeconds} second(s).`,
    risk_score: decision.risk_score,
    constraints: {},
    evaluation: {
      ...evaluation,
      authority_check: 'rate_limited',
      policies_evaluated: [],
      policy_matched: null,
      rule_matched: null,
      rules: [],
      risk_override: false,
    },
  };
}

function withRemaining(decision: EngineDecision, remaining: number | undefined): EngineDecision {
  // Only an ALLOW carries the grant's constraints (and so a rate_limit to annotate).
  const limit = decision.constraints.rate_limit as Record<string, unknown> | undefined;
  if (remaining === undefined || limit === undefined) return decision;
  return { ...decision, constraints: { ...decision.constraints, rate_limit: { ...limit, remaining } } };
}
