import { describe, expect, it } from 'vitest';
import { OUTCOMES, type Outcome, type RuleEvaluation } from '../model/index.js';
import { combineTiers, stricter } from './combine-tiers.js';

const rule = (outcome: Outcome, policy = 'p'): RuleEvaluation => ({
  matched: true,
  outcome,
  policy,
  priority: 0,
  rule_index: 0,
});
const STRICTNESS: Outcome[] = ['ALLOW', 'REQUIRE_CONFIRMATION', 'ESCALATE', 'DENY'];

describe('stricter', () => {
  it('orders ALLOW < REQUIRE_CONFIRMATION < ESCALATE < DENY', () => {
    for (const a of OUTCOMES)
      for (const b of OUTCOMES)
        expect(stricter(a, b), `${a} ${b}`).toBe(STRICTNESS.indexOf(a) > STRICTNESS.indexOf(b));
  });
});

describe('combineTiers', () => {
  it('lets the stricter tier decide; at equal strictness the cluster tier keeps the decision', () => {
    for (const c of OUTCOMES)
      for (const n of OUTCOMES) {
        const cluster = rule(c, 'platform');
        const namespace = rule(n, 'team-a/own');
        const combined = combineTiers(cluster, namespace, 'ALLOW');
        const namespaceDecides = STRICTNESS.indexOf(n) > STRICTNESS.indexOf(c);
        expect(combined, `${c} ${n}`).toEqual({
          tier: namespaceDecides ? 'namespace' : 'cluster',
          winner: namespaceDecides ? namespace : cluster,
          outcome: namespaceDecides ? n : c,
        });
      }
  });

  it('gives a namespace tier without a matching rule no opinion: the cluster tier decides as today', () => {
    for (const c of OUTCOMES)
      expect(combineTiers(rule(c), null, 'ALLOW')).toEqual({ tier: 'cluster', winner: rule(c), outcome: c });
    for (const d of OUTCOMES)
      expect(combineTiers(null, null, d)).toEqual({ tier: 'cluster', winner: null, outcome: d });
  });

  it("keeps the cluster tier's default outcome when no cluster rule matched: a namespace ALLOW cannot lift a default DENY", () => {
    expect(combineTiers(null, rule('ALLOW', 'team-a/open'), 'DENY')).toEqual({
      tier: 'cluster',
      winner: null,
      outcome: 'DENY',
    });
    expect(combineTiers(null, rule('ESCALATE', 'team-a/ask'), 'ALLOW')).toEqual({
      tier: 'namespace',
      winner: rule('ESCALATE', 'team-a/ask'),
      outcome: 'ESCALATE',
    });
  });
});
