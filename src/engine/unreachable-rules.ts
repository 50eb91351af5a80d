import type { CompiledRule, IndexSnapshot } from '../index/index.js';
import { outranks } from './policy-evaluation.js';

/** A rule that is legal but likely wrong, found from the rule order the engine decides by. */
export interface RuleFinding {
  kind: 'Policy' | 'NamespacedPolicy';
  /** The policy's name; `namespace/name` for a NamespacedPolicy. */
  policy: string;
  ruleIndex: number;
  capability: string;
  message: string;
}

/**
 * Rules of enabled policies that can never decide, because a rule without a condition for
 * the same capability always outranks them, and pairs of rules without conditions at equal
 * priority with different outcomes (the more restrictive one silently wins). Pure: the
 * same ranking as evaluatePolicies, within each tier (the cluster's Policies, then each
 * namespace's NamespacedPolicies), as the engine ranks rules only within a tier.
 */
export function unreachableRules(snapshot: IndexSnapshot): RuleFinding[] {
  return snapshot.ruleTiers().flatMap(({ namespace, rules }) => {
    const kind = namespace === undefined ? 'Policy' : 'NamespacedPolicy';
    return [...rules.keys()].sort().flatMap((capability) => findingsFor(kind, rules.get(capability)!));
  });
}

function findingsFor(kind: RuleFinding['kind'], rules: readonly CompiledRule[]): RuleFinding[] {
  const findings: RuleFinding[] = [];
  const unconditional = rules.filter((r) => r.condition === null);
  for (const rule of rules) {
    const tie = unconditional.find(
      (other) =>
        // Stryker disable next-line ConditionalExpression: a rule is never its own tie anyway, its outcome is its own.
        other !== rule &&
        rule.condition === null &&
        other.priority === rule.priority &&
        other.outcome !== rule.outcome,
    );
    if (tie) {
      // Reported once per pair, on the rule that loses.
      if (outranks(tie, rule))
        findings.push(
          finding(
            kind,
            rule,
            `has no condition, like ${describe(tie)} at the same priority ${rule.priority}, ` +
              `whose ${tie.outcome} always wins over this ${rule.outcome}; give one a condition or another priority`,
          ),
        );
      continue;
    }
    // Stryker disable next-line ConditionalExpression: no rule outranks itself; the check says what is meant.
    const always = unconditional.find((other) => other !== rule && outranks(other, rule));
    if (always)
      findings.push(
        finding(
          kind,
          rule,
          `can never decide: ${describe(always)} (priority ${always.priority}, no condition) ` +
            `always decides ${rule.capability} first`,
        ),
      );
  }
  return findings;
}

function describe(rule: CompiledRule): string {
  return `policy ${rule.policy} rule ${rule.ruleIndex}`;
}

function finding(kind: RuleFinding['kind'], rule: CompiledRule, text: string): RuleFinding {
  return {
    kind,
    policy: rule.policy,
    ruleIndex: rule.ruleIndex,
    capability: rule.capability,
    message: `rule ${rule.ruleIndex} (capability ${rule.capability}) ${text}`,
  };
}
