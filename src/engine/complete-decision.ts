import type { EngineDecision } from '../model/index.js';
import type { PreliminaryDecision } from './evaluate-proposal.js';
import type { ChargedRateLimit, RateLimitAdmissions } from './rate-limiter.js';

/**
 * Finishes a preliminary decision with the rate limiter's answer (`true`: admitted, where
 * no counter is kept, as in replays). Over a limit is a governance DENY (`rate_limited`),
 * not a request error; the rate limits belong to the authority check, so the policies'
 * verdict is dropped from the trail.
 */
export function completeDecision(
  preliminary: PreliminaryDecision,
  admission: RateLimitAdmissions | true,
): EngineDecision {
  const { decision, rateLimits } = preliminary;
  if (rateLimits.length === 0) return decision;
  if (admission === true) return decision;
  if (admission.admitted) {
    const grantAt = rateLimits.findIndex((l) => l.scope === 'grant');
    return withRemaining(decision, grantAt < 0 ? undefined : admission.remaining[grantAt]);
  }
  // A refusal the limiter did not place is charged to the first limit (fail closed all the same).
  const refused = rateLimits[admission.refusedBy ?? 0] ?? rateLimits[0]!;
  // Over the limit, the policies' verdict (what shadow policies would say, which tier decided) is not part of it.
  const { shadow_decision: _shadow, tier: _tier, ...evaluation } = decision.evaluation;
  return {
    outcome: 'DENY',
    reason: exceededReason(refused, preliminary),
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

function exceededReason(limit: ChargedRateLimit, { actorId, capability }: PreliminaryDecision): string {
  const rate = `at most ${limit.maxRequests} time(s) per ${limit.windowSeconds} second(s)`;
  return limit.scope === 'grant'
    ? `Rate limit exceeded: actor ${actorId} may propose ${capability} ${rate}.`
    : `Rate limit exceeded: namespace ${limit.namespace} may propose ${rate}, shared by all its actors ` +
        `(the budget of Delegation ${limit.delegation}).`;
}

function withRemaining(decision: EngineDecision, remaining: number | undefined): EngineDecision {
  // Only an ALLOW carries the grant's constraints (and so a rate_limit to annotate).
  const limit = decision.constraints.rate_limit as Record<string, unknown> | undefined;
  if (remaining === undefined || limit === undefined) return decision;
  return { ...decision, constraints: { ...decision.constraints, rate_limit: { ...limit, remaining } } };
}
