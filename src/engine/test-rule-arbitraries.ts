import fc from 'fast-check';
import { OUTCOMES, OUTCOME_RESTRICTIVENESS, type Outcome, type PolicyRuleSpec } from '../model/index.js';

/** Random policies for property tests of the engine; not part of the public surface. */

/** Conditions with a known value for parameters {n}: true, false, or an evaluation error. */
export const CONDITIONS: Array<{ source: string | undefined; value: (n: number) => boolean | 'error' }> = [
  { source: undefined, value: () => true },
  { source: 'parameters.n > 50', value: (n) => n > 50 },
  { source: 'parameters.n <= 50 and parameters.n >= 10', value: (n) => n <= 50 && n >= 10 },
  { source: 'not (parameters.n == 7) or false', value: (n) => n !== 7 },
  { source: 'parameters.absent == 1', value: () => 'error' },
  { source: 'parameters.n / 0 > 1', value: () => 'error' },
];

export const ruleArb = fc.record({
  outcome: fc.constantFrom(...OUTCOMES),
  priority: fc.integer({ min: -2, max: 2 }),
  condition: fc.integer({ min: 0, max: CONDITIONS.length - 1 }),
});
export type RandomRule = typeof ruleArb extends fc.Arbitrary<infer T> ? T : never;

/** Up to four policies of up to four rules each. */
export const policiesArb = fc.array(fc.array(ruleArb, { minLength: 1, maxLength: 4 }), { maxLength: 4 });

/** The rules of a random policy as a spec, for capability `capability`. */
export function ruleSpecs(rules: readonly RandomRule[], capability: string): PolicyRuleSpec[] {
  return rules.map((r) => ({
    capability,
    outcome: r.outcome,
    priority: r.priority,
    ...(CONDITIONS[r.condition]!.source ? { condition: CONDITIONS[r.condition]!.source } : {}),
  }));
}

/**
 * An independent reading of semantics.md step 5: the outcome of the rule that decides
 * among the policies, or null when none matched (a condition that errors matches unless
 * its outcome is ALLOW).
 */
export function expectedByPolicies(
  policies: ReadonlyArray<readonly RandomRule[]>,
  n: number,
): Outcome | null {
  const matched = policies.flatMap((rules) =>
    rules.filter((r) => {
      const value = CONDITIONS[r.condition]!.value(n);
      return value === 'error' ? r.outcome !== 'ALLOW' : value;
    }),
  );
  if (matched.length === 0) return null;
  const top = Math.max(...matched.map((r) => r.priority));
  const atTop = matched.filter((r) => r.priority === top).map((r) => r.outcome);
  return OUTCOME_RESTRICTIVENESS.find((o) => atTop.includes(o))!;
}

/** Step 6 with the default threshold 0.8. */
export function expectedAfterRisk(byPolicy: Outcome, risk: number): Outcome {
  return risk > 0.8 && (byPolicy === 'ALLOW' || byPolicy === 'REQUIRE_CONFIRMATION') ? 'ESCALATE' : byPolicy;
}
