import type { CompiledRule, ConditionBindings } from '../index/index.js';
import { OUTCOME_RESTRICTIVENESS, type RuleEvaluation } from '../model/index.js';

export interface PolicyEvaluation {
  /** Names of the policies that have rules for the capability, sorted. */
  policiesEvaluated: string[];
  rules: RuleEvaluation[];
  /** The deciding rule, or null when none matched. */
  winner: RuleEvaluation | null;
  /** The rule that would decide were warn- and audit-mode policies enforced too. */
  shadowWinner: RuleEvaluation | null;
}

/**
 * semantics.md step 5. Every rule of the capability is evaluated (the trail shows all of
 * them); rules of warn- and audit-mode policies never decide, but the rule that would,
 * were they enforced, is reported as shadowWinner. A condition that errors never grants and never lifts a restriction: it matches
 * when its outcome is not ALLOW and does not when it is ALLOW.
 */
export function evaluatePolicies(
  rules: readonly CompiledRule[],
  bindings: () => ConditionBindings,
): PolicyEvaluation {
  let cached: ConditionBindings | undefined;
  const evaluated = rules.map((rule): RuleEvaluation => {
    // Members in canonical (sorted) order, so that the audit log seals them natively (chain.ts).
    const verdict = (matched: boolean, error?: string): RuleEvaluation => {
      const evaluation: RuleEvaluation = {
        matched,
        outcome: rule.outcome,
        policy: rule.policy,
        priority: rule.priority,
        ...(rule.reviewTtlSeconds === undefined ? {} : { review_ttl_seconds: rule.reviewTtlSeconds }),
        rule_index: rule.ruleIndex,
      };
      // `enforcement` and `error` sort first. Spread first into every literal, they would give
      // each evaluation a V8 map of its own; only those that have them pay for that.
      if (rule.enforcement === 'enforce' && error === undefined) return evaluation;
      return {
        ...(rule.enforcement === 'enforce' ? {} : { enforcement: rule.enforcement }),
        ...(error === undefined ? {} : { error }),
        ...evaluation,
      };
    };
    if (!rule.condition) return verdict(true);
    const result = rule.condition.evaluate((cached ??= bindings()));
    if (result.ok) return verdict(result.matched);
    return verdict(rule.outcome !== 'ALLOW', result.error);
  });
  // Stryker disable next-line MethodExpression: the index lists rules by policy name already; sorted here so the trail does not depend on it.
  const policiesEvaluated = [...new Set(rules.map((r) => r.policy))].sort();
  const matched = evaluated.filter((r) => r.matched);
  const winner = matched
    .filter((r) => r.enforcement === undefined)
    .reduce<RuleEvaluation | null>(pickWinner, null);
  const shadowWinner = matched.reduce<RuleEvaluation | null>(pickWinner, null);
  return { policiesEvaluated, rules: evaluated, winner, shadowWinner };
}

function pickWinner(best: RuleEvaluation | null, rule: RuleEvaluation): RuleEvaluation {
  return best && !outranks(rule, best) ? best : rule;
}

type Ranked = Pick<RuleEvaluation, 'priority' | 'outcome'>;

/**
 * Whether `a` wins over `b` when both match: higher priority wins; at equal priority the
 * more restrictive outcome; otherwise the earlier rule (by policy name and position) stays.
 */
export function outranks(a: Ranked, b: Ranked): boolean {
  // Stryker disable next-line EqualityOperator: the priorities differ here, so > and >= agree.
  if (a.priority !== b.priority) return a.priority > b.priority;
  return restrictiveness(a) < restrictiveness(b);
}

function restrictiveness(rule: Ranked): number {
  return OUTCOME_RESTRICTIVENESS.indexOf(rule.outcome);
}
