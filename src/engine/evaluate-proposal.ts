import type { IndexedGrant, IndexSnapshot } from '../index/index.js';
import type {
  EngineDecision,
  Evaluation,
  Observations,
  Outcome,
  Proposal,
  RuleEvaluation,
  ShadowDecision,
} from '../model/index.js';
import { checkAuthority } from './authority-check.js';
import { checkCapability } from './capability-check.js';
import { conditionBindings } from './cel-bindings.js';
import { policyReason, riskOverrideReason } from './decision-reason.js';
import type { EngineSettings } from './engine-settings.js';
import { evaluatePolicies } from './policy-evaluation.js';
import { rateLimitKey, type RateLimitRequest } from './rate-limiter.js';
import { riskScore } from './risk-score.js';
import { grantConstraints } from './grant-constraints.js';

/**
 * The decision as it stands before the grant's rate limit is consulted. The counter may
 * live in Redis, so the caller asks its RateLimiter about `rateLimit` (when set) and
 * finishes with completeDecision.
 */
export interface PreliminaryDecision {
  /** The decision if the rate limit admits the request (or when there is none). */
  readonly decision: EngineDecision;
  /** Set only when capability and authority pass and the applied grant has a rate limit. */
  readonly rateLimit: RateLimitRequest | null;
  readonly actorId: string;
  readonly capability: string;
}

/**
 * semantics.md steps 2 to 6, pure: the same snapshot, proposal, time, settings and
 * observations give the same result.
 */
export function evaluateProposal(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  settings: EngineSettings,
  observed: Observations = {},
): PreliminaryDecision {
  const name = proposal.action.capability;
  const capability = snapshot.capability(name);
  const risk = riskScore(capability, proposal, settings.riskWeights);
  // Members in canonical (sorted) order, so that the audit log seals them natively (chain.ts).
  const trail: Evaluation = {
    authority_check: 'skipped',
    capability_check: 'pass',
    policies_evaluated: [],
    policy_matched: null,
    risk_override: false,
    risk_score: risk,
    risk_threshold: settings.riskThreshold,
    rule_matched: null,
    rules: [],
  };
  const done = (
    decision: EngineDecision,
    rateLimit: RateLimitRequest | null = null,
  ): PreliminaryDecision => ({
    decision,
    rateLimit,
    actorId: proposal.actor.id,
    capability: name,
  });
  const deny = (reason: string, evaluation: Evaluation) =>
    done({ outcome: 'DENY', reason, risk_score: risk, constraints: {}, evaluation });

  const capabilityResult = checkCapability(capability, proposal, observed);
  if (!capabilityResult.ok)
    return deny(capabilityResult.reason, { ...trail, capability_check: capabilityResult.code });
  const authority = checkAuthority(snapshot, proposal, now);
  if (!authority.ok) return deny(authority.reason, { ...trail, authority_check: authority.code });

  const decision = decideByPolicies(snapshot, proposal, now, settings, trail, authority.grant);
  const limit = authority.grant.constraints.rateLimit;
  return done(
    decision,
    limit
      ? {
          key: rateLimitKey(proposal.actor.id, name),
          maxRequests: limit.maxRequests,
          windowSeconds: limit.windowSeconds,
        }
      : null,
  );
}

/** Steps 5 and 6, once capability and authority passed. */
function decideByPolicies(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  settings: EngineSettings,
  trail: Evaluation,
  grant: IndexedGrant,
): EngineDecision {
  const risk = trail.risk_score;
  const policies = evaluatePolicies(snapshot.rulesFor(proposal.action.capability), () =>
    conditionBindings(proposal, now),
  );
  const winner = policies.winner;
  const decide = (rule: typeof winner) => {
    const byPolicy = rule?.outcome ?? settings.defaultOutcome;
    const override =
      risk > settings.riskThreshold && (byPolicy === 'ALLOW' || byPolicy === 'REQUIRE_CONFIRMATION');
    return { override, outcome: override ? ('ESCALATE' as const) : byPolicy };
  };
  const { override, outcome } = decide(winner);
  const reason = policyReason(winner, settings.defaultOutcome);
  const shadow = shadowOf(policies.shadowWinner, winner, decide(policies.shadowWinner).outcome, outcome);
  return {
    outcome,
    reason: override ? riskOverrideReason(reason, risk, settings.riskThreshold) : reason,
    risk_score: risk,
    constraints: outcome === 'ALLOW' ? grantConstraints(grant.constraints) : {},
    evaluation: {
      ...trail,
      authority_check: 'pass',
      policies_evaluated: policies.policiesEvaluated,
      policy_matched: winner?.policy ?? null,
      rule_matched: winner
        ? {
            outcome: winner.outcome,
            policy: winner.policy,
            priority: winner.priority,
            ...(winner.review_ttl_seconds === undefined
              ? {}
              : { review_ttl_seconds: winner.review_ttl_seconds }),
            rule_index: winner.rule_index,
          }
        : null,
      rules: policies.rules,
      risk_override: override,
      ...(shadow ? { shadow_decision: shadow } : {}),
    },
    ...(shadow?.enforcement === 'warn' ? { warnings: [shadowWarning(shadow)] } : {}),
  };
}

/** What a warn- or audit-mode rule would have decided, when that differs from the decision. */
function shadowOf(
  shadowWinner: RuleEvaluation | null,
  winner: RuleEvaluation | null,
  wouldBe: Outcome,
  outcome: Outcome,
): ShadowDecision | undefined {
  // An enforced shadow winner is the winner itself: nothing is shadowed.
  if (!shadowWinner?.enforcement || wouldBe === outcome) return undefined;
  return {
    outcome: wouldBe,
    policy: shadowWinner.policy,
    rule_index: shadowWinner.rule_index,
    enforcement: shadowWinner.enforcement,
  };
}

function shadowWarning(shadow: ShadowDecision): string {
  return `policy ${shadow.policy} (enforcementAction warn), rule ${shadow.rule_index}, would have decided ${shadow.outcome}`;
}
