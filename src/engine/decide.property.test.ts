import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildIndex } from '../index/index.js';
import { ACTOR_TYPES, RISK_LEVELS, type Outcome } from '../model/index.js';
import { decide } from './decide.js';
import { DEFAULT_ENGINE_SETTINGS } from './engine-settings.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { capability, grant, policy, proposal } from './test-fixtures.js';
import { expectedAfterRisk, expectedByPolicies, policiesArb, ruleSpecs } from './test-rule-arbitraries.js';

const scenarioArb = fc.record({
  policies: policiesArb,
  n: fc.integer({ min: 0, max: 100 }),
  riskLevel: fc.constantFrom(...RISK_LEVELS),
  actorType: fc.constantFrom(...ACTOR_TYPES),
  production: fc.boolean(),
  minute: fc.integer({ min: 0, max: 7 * 24 * 60 }),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function setUp(s: Scenario, reverse = false) {
  const objects = [
    capability('ops.run', { riskLevel: s.riskLevel }),
    grant('g', 'agent-1', [{ capability: 'ops.run' }]),
    ...s.policies.map((rules, i) => policy(`policy-${i}`, ruleSpecs(rules, 'ops.run'))),
  ];
  const snapshot = buildIndex(reverse ? [...objects].reverse() : objects);
  const p = proposal(
    'ops.run',
    { n: s.n },
    { type: s.actorType },
    s.production ? { metadata: { environment: 'production' } } : undefined,
  );
  const now = new Date(Date.UTC(2024, 0, 1) + s.minute * 60_000);
  return { snapshot, p, now };
}

/** An independent reading of semantics.md step 5 and 6. */
function expectedOutcome(s: Scenario, risk: number): Outcome {
  return expectedAfterRisk(expectedByPolicies(s.policies, s.n) ?? 'ALLOW', risk);
}

describe('decide (properties)', () => {
  it('follows the pipeline of semantics.md for any set of rules', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { snapshot, p, now } = setUp(s);
        const d = decide(snapshot, p, now, DEFAULT_ENGINE_SETTINGS, new MemoryRateLimiter());
        expect(d.outcome).toBe(expectedOutcome(s, d.risk_score));
        expect(d.risk_score).toBeGreaterThanOrEqual(0);
        expect(d.risk_score).toBeLessThanOrEqual(1);
        if (d.risk_score > 0.8) expect(d.outcome).not.toBe('ALLOW');
        expect(d.evaluation.rules).toHaveLength(s.policies.flat().length);
        for (const rule of d.evaluation.rules)
          if (rule.error && rule.outcome === 'ALLOW') expect(rule.matched).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic: same snapshot, proposal and time give the same decision, whatever the object order', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const a = setUp(s);
        const b = setUp(s, true);
        const first = decide(a.snapshot, a.p, a.now, DEFAULT_ENGINE_SETTINGS, new MemoryRateLimiter());
        const again = decide(a.snapshot, a.p, a.now, DEFAULT_ENGINE_SETTINGS, new MemoryRateLimiter());
        const reordered = decide(b.snapshot, b.p, b.now, DEFAULT_ENGINE_SETTINGS, new MemoryRateLimiter());
        expect(again).toEqual(first);
        expect(reordered).toEqual(first);
      }),
      { numRuns: 150 },
    );
  });

  it('never lets a policy lift a failed capability or authority check', () => {
    fc.assert(
      fc.property(scenarioArb, fc.boolean(), (s, unknownActor) => {
        const { snapshot, p, now } = setUp(s);
        const bad = unknownActor
          ? { ...p, actor: { ...p.actor, id: 'nobody' } }
          : { ...p, action: { ...p.action, capability: 'ops.unknown' } };
        const d = decide(snapshot, bad, now, DEFAULT_ENGINE_SETTINGS, new MemoryRateLimiter());
        expect(d.outcome).toBe('DENY');
        expect(d.evaluation.policies_evaluated).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
