import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildIndex } from '../index/index.js';
import { ACTOR_TYPES, RISK_LEVELS, type ConfigObject, type Outcome } from '../model/index.js';
import { stricter } from './combine-tiers.js';
import { decide } from './decide.js';
import { resolveEngineSettings } from './engine-settings.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { capability, grant, policy, proposal, tenantWorld, type TenantObjects } from './test-fixtures.js';
import { expectedAfterRisk, expectedByPolicies, policiesArb, ruleSpecs } from './test-rule-arbitraries.js';

/**
 * The composition rule of tenancy (issue #38) over random cluster and namespace
 * configurations: the actor team-a/bot, its namespace's policies, and another namespace's.
 */
const scenarioArb = fc.record({
  cluster: policiesArb,
  teamA: policiesArb,
  teamB: policiesArb,
  defaultOutcome: fc.constantFrom('ALLOW' as const, 'DENY' as const),
  /** Granted by a cluster ActorGrant, or by its own namespace's NamespacedActorGrant. */
  grantedBy: fc.constantFrom('cluster' as const, 'namespace' as const),
  n: fc.integer({ min: 0, max: 100 }),
  riskLevel: fc.constantFrom(...RISK_LEVELS),
  actorType: fc.constantFrom(...ACTOR_TYPES),
  production: fc.boolean(),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

const ACTOR = 'team-a/bot';

function clusterObjects(s: Scenario): ConfigObject[] {
  return [
    capability('ops.run', { riskLevel: s.riskLevel }),
    grant('agent-1', 'agent-1', [{ capability: 'ops.run' }]),
    ...(s.grantedBy === 'cluster' ? [grant('team-a-bot', ACTOR, [{ capability: 'ops.run' }])] : []),
    ...s.cluster.map((rules, i) => policy(`platform-${i}`, ruleSpecs(rules, 'ops.run'))),
  ];
}

/** The tenancy objects, with or without the namespaces' policies. */
function tenantObjects(s: Scenario, policies: 'with' | 'without'): TenantObjects {
  const own = (prefix: string, list: Scenario['teamA']) =>
    list.map((rules, i) => policy(`${prefix}-${i}`, ruleSpecs(rules, 'ops.run')));
  return {
    delegations: [
      {
        name: 'teams',
        spec: { namespaces: ['team-a', 'team-b'], capabilities: ['ops.*'], maxRiskLevel: 'critical' },
      },
    ],
    grants:
      s.grantedBy === 'namespace' ? { 'team-a': [grant('bot', 'bot', [{ capability: 'ops.run' }])] } : {},
    policies: policies === 'with' ? { 'team-a': own('own', s.teamA), 'team-b': own('other', s.teamB) } : {},
  };
}

function run(s: Scenario, snapshot: ReturnType<typeof buildIndex>, actorId: string) {
  const p = proposal(
    'ops.run',
    { n: s.n },
    { id: actorId, type: s.actorType },
    s.production ? { metadata: { environment: 'production' } } : undefined,
  );
  const settings = resolveEngineSettings({ defaultOutcome: s.defaultOutcome });
  return decide(snapshot, p, new Date('2024-06-12T12:00:00Z'), settings, new MemoryRateLimiter());
}

const atLeastAsStrict = (a: Outcome, b: Outcome) => !stricter(b, a);

describe('the composition of tiers (properties)', () => {
  it('never decides looser than the cluster tier alone, and decides as the stricter tier', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const d = run(s, tenantWorld(clusterObjects(s), tenantObjects(s, 'with')), ACTOR);
        const clusterOnly = run(s, tenantWorld(clusterObjects(s), tenantObjects(s, 'without')), ACTOR);
        expect(atLeastAsStrict(d.outcome, clusterOnly.outcome)).toBe(true);
        // An independent reading: the cluster tier's verdict (else the default), the
        // namespace's only when it matched, the stricter of both, then the risk override.
        const byCluster = expectedByPolicies(s.cluster, s.n) ?? s.defaultOutcome;
        const byNamespace = expectedByPolicies(s.teamA, s.n);
        const combined = byNamespace && stricter(byNamespace, byCluster) ? byNamespace : byCluster;
        expect(d.outcome).toBe(expectedAfterRisk(combined, d.risk_score));
        expect(d.evaluation.tier).toBe(
          s.teamA.length === 0
            ? undefined
            : byNamespace && stricter(byNamespace, byCluster)
              ? 'namespace'
              : 'cluster',
        );
        const own = d.evaluation.policies_evaluated.filter((p) => p.includes('/'));
        expect(own.every((p) => p.startsWith('team-a/own-'))).toBe(true);
        if (d.evaluation.tier === 'namespace') expect(d.evaluation.policy_matched).toMatch(/^team-a\//);
      }),
      { numRuns: 300 },
    );
  });

  it('decides exactly as before tenancy, trail and all, where no namespace tier applies', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const before = buildIndex(clusterObjects(s));
        const tenancy = tenantWorld(clusterObjects(s), tenantObjects(s, 'with'));
        // A cluster actor is governed as before, whatever the namespaces hold; its trail
        // has no tier, as before tenancy.
        const clusterActor = run(s, tenancy, 'agent-1');
        expect(clusterActor.evaluation).not.toHaveProperty('tier');
        expect(JSON.stringify(clusterActor)).toBe(JSON.stringify(run(s, before, 'agent-1')));
        // A namespaced actor granted by a cluster ActorGrant, while no namespace has policies,
        // is governed as before too.
        if (s.grantedBy === 'cluster') {
          const withoutPolicies = run(s, tenantWorld(clusterObjects(s), tenantObjects(s, 'without')), ACTOR);
          expect(withoutPolicies.evaluation).not.toHaveProperty('tier');
          expect(JSON.stringify(withoutPolicies)).toBe(JSON.stringify(run(s, before, ACTOR)));
        }
      }),
      { numRuns: 200 },
    );
  });
});
