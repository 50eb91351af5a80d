import type { ConditionBindings, IndexedGrant, IndexSnapshot } from '../index/index.js';
import {
  parseNamespacedActorId,
  type EngineDecision,
  type Evaluation,
  type Observations,
  type Outcome,
  type RiskLevel,
  type Proposal,
  type RateLimit,
  type RuleEvaluation,
  type ShadowDecision,
} from '../model/index.js';
import { checkAuthority } from './authority-check.js';
import { checkCapability } from './capability-check.js';
import { conditionBindings } from './cel-bindings.js';
import { combineTiers, type CombinedVerdict } from './combine-tiers.js';
import { policyReason, riskOverrideReason } from './decision-reason.js';
import type { EngineSettings } from './engine-settings.js';
import { evaluatePolicies, type PolicyEvaluation } from './policy-evaluation.js';
import {
  namespaceRateLimitKey,
  rateLimitKey,
  type ChargedRateLimit,
  type RateLimitRequest,
} from './rate-limiter.js';
import { riskScore } from './risk-score.js';
import { grantConstraints } from './grant-constraints.js';

/**
 * The decision as it stands before the rate limits are consulted. The counters may live
 * in Redis, so the caller asks its RateLimiter about `rateLimits` at once (admitAll, or
 * peekAll for a dry run) and finishes with completeDecision.
 */
export interface PreliminaryDecision {
  /** The decision if the rate limits admit the request (or when there are none). */
  readonly decision: EngineDecision;
  /**
   * Empty unless capability and authority pass; then the applied grant's rate limit, if
   * any, and the budget of the actor's namespace, if its Delegation sets one.
   */
  readonly rateLimits: readonly ChargedRateLimit[];
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
    rateLimits: readonly ChargedRateLimit[] = [],
  ): PreliminaryDecision => ({
    decision,
    rateLimits,
    actorId: proposal.actor.id,
    capability: name,
  });
  const deny = (reason: string, evaluation: Evaluation) =>
    done({ outcome: 'DENY', reason, risk_score: risk, constraints: {}, evaluation });

  const capabilityResult = checkCapability(capability, proposal, observed);
  if (!capabilityResult.ok)
    return deny(capabilityResult.reason, { ...trail, capability_check: capabilityResult.code });
  const namespace = parseNamespacedActorId(proposal.actor.id)?.namespace;
  const authority = checkAuthority(snapshot, proposal, now, capabilityResult.capability, namespace);
  if (!authority.ok) return deny(authority.reason, { ...trail, authority_check: authority.code });

  const decided = decideByPolicies(snapshot, proposal, now, settings, trail, authority.grant, namespace);
  const decision =
    namespace !== undefined && decided.outcome === 'ESCALATE'
      ? withCapabilityRiskLevel(decided, capabilityResult.capability.spec.riskLevel)
      : decided;
  return done(decision, chargedRateLimits(snapshot, proposal.actor.id, name, authority.grant, namespace));
}

/**
 * The grant's own limit, then the namespace's budget: charged for every decision of the
 * namespace's actors that passes the gate, whatever grant authorizes it, so that more
 * actors buy no more calls.
 */
function chargedRateLimits(
  snapshot: IndexSnapshot,
  actorId: string,
  capability: string,
  grant: IndexedGrant,
  namespace: string | undefined,
): ChargedRateLimit[] {
  const limits: ChargedRateLimit[] = [];
  const own = grant.constraints.rateLimit;
  if (own) limits.push({ scope: 'grant', key: rateLimitKey(actorId, capability), ...limitOf(own) });
  if (namespace === undefined) return limits;
  const delegation = snapshot.delegationOf(namespace);
  const budget = delegation?.spec.rateLimit;
  if (delegation && budget)
    limits.push({
      scope: 'namespace',
      namespace,
      delegation: delegation.name,
      key: namespaceRateLimitKey(namespace),
      ...limitOf(budget),
    });
  return limits;
}

function limitOf(limit: RateLimit): Pick<RateLimitRequest, 'maxRequests' | 'windowSeconds'> {
  return { maxRequests: limit.maxRequests, windowSeconds: limit.windowSeconds };
}

/** What a review of a namespaced actor's escalation weighs, recorded with it (governance/review-namespace.ts). */
function withCapabilityRiskLevel(decided: EngineDecision, level: RiskLevel): EngineDecision {
  return { ...decided, evaluation: { ...decided.evaluation, capability_risk_level: level } };
}

/**
 * Steps 5 and 6, once capability and authority passed: the cluster tier, and the actor's
 * namespace tier when its namespace has rules for the capability, each evaluated alike
 * and combined (combine-tiers.ts); then the risk override.
 */
function decideByPolicies(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  settings: EngineSettings,
  trail: Evaluation,
  grant: IndexedGrant,
  namespace: string | undefined,
): EngineDecision {
  const risk = trail.risk_score;
  const { cluster, local, policiesEvaluated, rules } = evaluateTiers(snapshot, proposal, now, namespace);
  // The same combination for the rules that decide and for those that would, were all enforced.
  const decide = (pick: (tier: PolicyEvaluation) => RuleEvaluation | null) =>
    withRiskOverride(
      combineTiers(pick(cluster), local ? pick(local) : null, settings.defaultOutcome),
      risk,
      settings,
    );
  const { override, outcome, winner, tier } = decide((t) => t.winner);
  const wouldBe = decide((t) => t.shadowWinner);
  const reason = policyReason(winner, settings.defaultOutcome);
  const shadow = shadowOf(wouldBe.winner, wouldBe.outcome, outcome);
  return {
    outcome,
    reason: override ? riskOverrideReason(reason, risk, settings.riskThreshold) : reason,
    risk_score: risk,
    constraints: outcome === 'ALLOW' ? grantConstraints(grant.constraints) : {},
    evaluation: {
      ...trail,
      authority_check: 'pass',
      policies_evaluated: policiesEvaluated,
      policy_matched: winner?.policy ?? null,
      rule_matched: winner ? ruleMatched(winner) : null,
      rules,
      risk_override: override,
      ...(shadow ? { shadow_decision: shadow } : {}),
      // Last: the trail's members stay in canonical (sorted) order.
      ...(local ? { tier } : {}),
    },
    ...(shadow?.enforcement === 'warn' ? { warnings: [shadowWarning(shadow)] } : {}),
  };
}

/** Each tier evaluated alike; the namespace tier only when the namespace has rules for the capability. */
function evaluateTiers(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  namespace: string | undefined,
): {
  cluster: PolicyEvaluation;
  local: PolicyEvaluation | null;
  /** Both tiers' policies and rules for the trail, the cluster's first. */
  policiesEvaluated: string[];
  rules: RuleEvaluation[];
} {
  const capability = proposal.action.capability;
  let bindings: ConditionBindings | undefined;
  const bind = () => (bindings ??= conditionBindings(proposal, now));
  const cluster = evaluatePolicies(snapshot.rulesFor(capability), bind);
  const namespaceRules =
    namespace === undefined ? undefined : snapshot.namespaceRulesFor(namespace, capability);
  if (!namespaceRules?.length)
    return { cluster, local: null, policiesEvaluated: cluster.policiesEvaluated, rules: cluster.rules };
  const local = evaluatePolicies(namespaceRules, bind);
  return {
    cluster,
    local,
    policiesEvaluated: [...cluster.policiesEvaluated, ...local.policiesEvaluated],
    rules: [...cluster.rules, ...local.rules],
  };
}

/** Step 6: a risk score above the threshold escalates what would be allowed or only confirmed. */
function withRiskOverride(verdict: CombinedVerdict, risk: number, settings: EngineSettings) {
  const byPolicy = verdict.outcome;
  const override =
    risk > settings.riskThreshold && (byPolicy === 'ALLOW' || byPolicy === 'REQUIRE_CONFIRMATION');
  return { ...verdict, override, outcome: override ? ('ESCALATE' as const) : byPolicy };
}

function ruleMatched(winner: RuleEvaluation): NonNullable<Evaluation['rule_matched']> {
  return {
    outcome: winner.outcome,
    policy: winner.policy,
    priority: winner.priority,
    ...(winner.review_ttl_seconds === undefined ? {} : { review_ttl_seconds: winner.review_ttl_seconds }),
    rule_index: winner.rule_index,
  };
}

/** What a warn- or audit-mode rule would have decided, when that differs from the decision. */
function shadowOf(
  shadowWinner: RuleEvaluation | null,
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
