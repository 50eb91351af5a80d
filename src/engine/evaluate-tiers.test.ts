import { describe, expect, it } from 'vitest';
import type { DelegationSpec, Outcome, PolicyRuleSpec } from '../model/index.js';
import { decide } from './decide.js';
import { DEFAULT_ENGINE_SETTINGS } from './engine-settings.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import {
  capability,
  grant,
  NOON_UTC,
  policy,
  proposal,
  tenantWorld,
  type TenantObjects,
} from './test-fixtures.js';

const CAPABILITIES = [
  capability('db.query', { riskLevel: 'medium' }),
  capability('db.drop', { riskLevel: 'critical' }),
  capability('files.read'),
];
const DELEGATION: DelegationSpec = { namespaces: ['team-a'], capabilities: ['db.*'], maxRiskLevel: 'high' };
const teamGrant = (...capabilities: string[]) =>
  grant(
    'bot',
    'bot',
    capabilities.map((c) => ({ capability: c })),
  );
const rules = (name: string, ...list: Array<Partial<PolicyRuleSpec> & { outcome: Outcome }>) =>
  policy(
    name,
    list.map((r) => ({ capability: 'db.query', ...r })),
  );
const run = (
  tenant: TenantObjects,
  cluster: Parameters<typeof tenantWorld>[0] = [],
  capabilityName = 'db.query',
  actorId = 'team-a/bot',
  limiter = new MemoryRateLimiter(),
) =>
  decide(
    tenantWorld([...CAPABILITIES, ...cluster], tenant),
    proposal(capabilityName, {}, { id: actorId }),
    NOON_UTC,
    DEFAULT_ENGINE_SETTINGS,
    limiter,
  );
const delegated = (extra: TenantObjects = {}): TenantObjects => ({
  delegations: [{ name: 'team-a', spec: DELEGATION }],
  grants: { 'team-a': [teamGrant('db.query', 'db.drop', 'files.read')] },
  ...extra,
});

describe('the Delegation gate of namespaced grants', () => {
  it('denies with no_delegation when no Delegation covers the namespace', () => {
    const d = run({ grants: { 'team-a': [teamGrant('db.query')] } });
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation.authority_check).toBe('no_delegation');
    expect(d.reason).toBe(
      'No Delegation covers namespace team-a, so its NamespacedActorGrants authorize nothing (db.query).',
    );
    expect(d.evaluation.policies_evaluated).toEqual([]);
  });

  it('denies with outside_delegation a granted capability the Delegation does not cover', () => {
    const d = run(delegated(), [], 'files.read');
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation.authority_check).toBe('outside_delegation');
    expect(d.reason).toBe('Namespace team-a may not grant files.read: Delegation team-a covers only db.*.');
  });

  it('denies with outside_delegation a granted capability riskier than the Delegation allows', () => {
    const d = run(delegated(), [], 'db.drop');
    expect(d.evaluation.authority_check).toBe('outside_delegation');
    expect(d.reason).toContain('its risk level critical is above high');
  });

  it('lets a covered namespaced grant authorize, and a Delegation of another namespace not', () => {
    expect(run(delegated())).toMatchObject({ outcome: 'ALLOW', evaluation: { authority_check: 'pass' } });
    const elsewhere = { name: 'team-b', spec: { ...DELEGATION, namespaces: ['team-b'] } };
    expect(run(delegated({ delegations: [elsewhere] })).evaluation.authority_check).toBe('no_delegation');
  });

  it('lets a cluster ActorGrant grant a namespaced actor without any Delegation', () => {
    const d = run({}, [grant('platform', 'team-a/bot', [{ capability: 'db.drop' }])], 'db.drop');
    expect(d.evaluation.authority_check).toBe('pass');
  });

  it('says no_grant, as today, when the actor holds no grant at all', () => {
    expect(run(delegated(), [], 'db.query', 'team-a/other').evaluation.authority_check).toBe('no_grant');
  });
});

describe('the two tiers', () => {
  const cluster = (outcome: Outcome) => [rules('platform', { outcome })];

  it('never lets a namespaced ALLOW of any priority lift a cluster DENY or ESCALATE', () => {
    for (const outcome of ['DENY', 'ESCALATE'] as const) {
      const d = run(
        delegated({ policies: { 'team-a': [rules('open', { outcome: 'ALLOW', priority: 1_000_000 })] } }),
        cluster(outcome),
      );
      expect(d.outcome).toBe(outcome);
      expect(d.evaluation).toMatchObject({ tier: 'cluster', policy_matched: 'platform' });
    }
  });

  it('lets a namespaced ESCALATE tighten a cluster ALLOW, and names the namespaced policy', () => {
    const d = run(
      delegated({ policies: { 'team-a': [rules('ask', { outcome: 'ESCALATE' })] } }),
      cluster('ALLOW'),
    );
    expect(d.outcome).toBe('ESCALATE');
    expect(d.reason).toBe('Escalated for review by policy team-a/ask (rule 0, priority 0).');
    expect(d.evaluation).toMatchObject({
      tier: 'namespace',
      policy_matched: 'team-a/ask',
      rule_matched: { policy: 'team-a/ask', outcome: 'ESCALATE' },
      policies_evaluated: ['platform', 'team-a/ask'],
    });
    expect(d.evaluation.rules.map((r) => r.policy)).toEqual(['platform', 'team-a/ask']);
  });

  it("keeps the cluster tier's decision when no namespaced rule matches, and says so", () => {
    const never = { outcome: 'DENY' as const, condition: 'actor.id == "team-a/other"' };
    const d = run(
      delegated({ policies: { 'team-a': [rules('never', never)] } }),
      cluster('REQUIRE_CONFIRMATION'),
    );
    expect(d.outcome).toBe('REQUIRE_CONFIRMATION');
    expect(d.evaluation).toMatchObject({ tier: 'cluster', policy_matched: 'platform' });
  });

  it("applies a namespace's policies only to its own actors", () => {
    const tenant = delegated({ policies: { 'team-b': [rules('deny', { outcome: 'DENY' })] } });
    const d = run(tenant, cluster('ALLOW'));
    expect(d.outcome).toBe('ALLOW');
    expect(d.evaluation).not.toHaveProperty('tier');
    expect(d.evaluation.policies_evaluated).toEqual(['platform']);
  });

  it('applies the risk override after combining the tiers', () => {
    const d = run(
      {
        policies: {
          'team-a': [rules('confirm', { capability: 'db.drop', outcome: 'REQUIRE_CONFIRMATION' })],
        },
      },
      [grant('platform', 'team-a/bot', [{ capability: 'db.drop' }])],
      'db.drop',
    );
    expect(d.outcome).toBe('ESCALATE');
    expect(d.evaluation).toMatchObject({
      tier: 'namespace',
      risk_override: true,
      policy_matched: 'team-a/confirm',
    });
  });

  it('drops the tier with the policies when the rate limit denies', () => {
    const limited = grant('platform', 'team-a/bot', [
      { capability: 'db.query', constraints: { rateLimit: { maxRequests: 1, windowSeconds: 60 } } },
    ]);
    const tenant = { policies: { 'team-a': [rules('ask', { outcome: 'ESCALATE' })] } };
    const limiter = new MemoryRateLimiter();
    expect(run(tenant, [limited], 'db.query', 'team-a/bot', limiter).evaluation.tier).toBe('namespace');
    const d = run(tenant, [limited], 'db.query', 'team-a/bot', limiter);
    expect(d.evaluation.authority_check).toBe('rate_limited');
    expect(d.evaluation).not.toHaveProperty('tier');
  });
});

describe("the capability's risk level on a namespaced actor's escalation (what its review weighs)", () => {
  const cluster = (outcome: Outcome) => [rules('platform', { outcome })];
  it('is recorded when a namespaced actor is escalated, by either tier', () => {
    const byNamespace = run(
      delegated({ policies: { 'team-a': [rules('ask', { outcome: 'ESCALATE' })] } }),
      cluster('ALLOW'),
    );
    expect(byNamespace.evaluation.capability_risk_level).toBe('medium');
    const byCluster = run(delegated(), cluster('ESCALATE'));
    expect(byCluster.outcome).toBe('ESCALATE');
    expect(byCluster.evaluation.capability_risk_level).toBe('medium');
  });

  it('is not recorded for other outcomes, nor for cluster actors', () => {
    expect(run(delegated(), cluster('ALLOW')).evaluation).not.toHaveProperty('capability_risk_level');
    const clusterActor = run(
      {},
      [...cluster('ESCALATE'), grant('agent-1', 'agent-1', [{ capability: 'db.query' }])],
      'db.query',
      'agent-1',
    );
    expect(clusterActor.outcome).toBe('ESCALATE');
    expect(clusterActor.evaluation).not.toHaveProperty('capability_risk_level');
  });
});
