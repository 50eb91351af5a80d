import type { IndexSnapshot } from '../index/index.js';
import type { EngineDecision } from '../model/index.js';

export interface RuleCoverage {
  policy: string;
  ruleIndex: number;
  capability: string;
  /** Cases in which the rule's condition matched (it was in the running). */
  matched: number;
  /** Cases it decided. */
  decided: number;
}

/**
 * Per rule of every enabled, valid policy (and NamespacedPolicy): how many cases matched it and how many it
 * decided. Suites that share manifests add up (rules are known by policy and position).
 */
export class RuleCoverageCounter {
  private readonly rules = new Map<string, RuleCoverage>();

  /** Counts the rules of this configuration too: every tier's (NamespacedPolicies' as `ns/name`). */
  addRules(snapshot: IndexSnapshot): void {
    const rules = snapshot.ruleTiers().flatMap((tier) => [...tier.rules.values()].flat());
    for (const { policy, ruleIndex, capability } of rules)
      if (!this.rules.has(key(policy, ruleIndex)))
        this.rules.set(key(policy, ruleIndex), { policy, ruleIndex, capability, matched: 0, decided: 0 });
  }

  count(decision: EngineDecision): void {
    for (const rule of decision.evaluation.rules) {
      const entry = this.rules.get(key(rule.policy, rule.rule_index));
      if (entry && rule.matched) entry.matched += 1;
    }
    const decider = decision.evaluation.rule_matched;
    const entry = decider && this.rules.get(key(decider.policy, decider.rule_index));
    if (entry) entry.decided += 1;
  }

  /** Every rule, by policy then position. */
  report(): RuleCoverage[] {
    return [...this.rules.values()].sort((a, b) =>
      a.policy === b.policy ? a.ruleIndex - b.ruleIndex : a.policy < b.policy ? -1 : 1,
    );
  }

  /** Rules no case reached (matched). */
  unreached(): RuleCoverage[] {
    return this.report().filter((r) => r.matched === 0);
  }

  /** The share of rules some case reached, in percent (100 with no rules). */
  percent(): number {
    const all = this.report();
    return all.length === 0 ? 100 : (100 * (all.length - this.unreached().length)) / all.length;
  }
}

function key(policy: string, ruleIndex: number): string {
  return `${policy}\u0000${ruleIndex}`;
}
