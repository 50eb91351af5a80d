import { OUTCOME_RESTRICTIVENESS, type Outcome, type RuleEvaluation, type Tier } from '../model/index.js';

/** Whether `a` is strictly stricter than `b` (ALLOW < REQUIRE_CONFIRMATION < ESCALATE < DENY). */
export function stricter(a: Outcome, b: Outcome): boolean {
  // OUTCOME_RESTRICTIVENESS lists the most restrictive first.
  return OUTCOME_RESTRICTIVENESS.indexOf(a) < OUTCOME_RESTRICTIVENESS.indexOf(b);
}

export interface CombinedVerdict {
  /** The tier whose verdict is the outcome. */
  tier: Tier;
  /** That tier's deciding rule; null when the cluster tier's default decided. */
  winner: RuleEvaluation | null;
  outcome: Outcome;
}

/**
 * The composition rule of tenancy (issue #38): the stricter tier decides, so a namespace
 * can tighten but never loosen what the cluster decided. The cluster tier always has a
 * verdict (its winning rule, else the default outcome); a namespace tier without a
 * matching rule has no opinion. At equal strictness the cluster tier keeps the decision:
 * the namespace changed nothing. Priorities are never compared across tiers.
 */
export function combineTiers(
  clusterWinner: RuleEvaluation | null,
  namespaceWinner: RuleEvaluation | null,
  defaultOutcome: Outcome,
): CombinedVerdict {
  const clusterOutcome = clusterWinner?.outcome ?? defaultOutcome;
  if (namespaceWinner && stricter(namespaceWinner.outcome, clusterOutcome))
    return { tier: 'namespace', winner: namespaceWinner, outcome: namespaceWinner.outcome };
  return { tier: 'cluster', winner: clusterWinner, outcome: clusterOutcome };
}
