import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { LOCAL_ACTOR_ID_MAX_LENGTH } from './namespaced-actor-id.js';
import { actorGrantSpecSchema, policySpecSchema } from './spec-schemas.js';
import { TENANCY_SPEC_SCHEMAS } from './tenancy-schemas.js';

const ajv = new Ajv({ allErrors: true, strict: true, logger: false });
ajv.addKeyword({ keyword: 'x-kubernetes-preserve-unknown-fields', schemaType: 'boolean' });
const valid = (kind: keyof typeof TENANCY_SPEC_SCHEMAS) => {
  const check = ajv.compile(TENANCY_SPEC_SCHEMAS[kind]);
  return (spec: unknown) => check(spec);
};

describe('Delegation spec schema', () => {
  const delegation = valid('Delegation');
  const example = {
    namespaces: ['team-a'],
    capabilities: ['db.*', 'tickets.create'],
    maxRiskLevel: 'high',
    rateLimit: { maxRequests: 600, windowSeconds: 60 },
    reviewers: { maxRiskLevel: 'medium' },
  };

  it("accepts the issue's example, and one without rate limit and reviewers", () => {
    expect(delegation(example)).toBe(true);
    const { rateLimit: _r, reviewers: _v, ...bare } = example;
    expect(delegation(bare)).toBe(true);
  });

  it('accepts capability names and trailing-".*" patterns, nothing else', () => {
    for (const pattern of ['db.*', 'db.admin.*', 'tickets.create', 'a_b.c-d'])
      expect(delegation({ ...example, capabilities: [pattern] }), pattern).toBe(true);
    for (const pattern of ['*', 'db', 'db.*.x', 'db*', 'db.**', 'Db.*', '.*', 'db.'])
      expect(delegation({ ...example, capabilities: [pattern] }), pattern).toBe(false);
  });

  it('names namespaces by Kubernetes namespace name, at least one', () => {
    expect(delegation({ ...example, namespaces: [] })).toBe(false);
    for (const ns of ['Team-a', 'team_a', 'team.a', '-a', 'n'.repeat(64)])
      expect(delegation({ ...example, namespaces: [ns] }), ns).toBe(false);
  });

  it('requires namespaces, capabilities and maxRiskLevel, and refuses unknown fields', () => {
    for (const field of ['namespaces', 'capabilities', 'maxRiskLevel']) {
      const { [field as keyof typeof example]: _gone, ...rest } = example;
      expect(delegation(rest), field).toBe(false);
    }
    expect(delegation({ ...example, namespaceSelector: {} })).toBe(false);
    expect(delegation({ ...example, maxRiskLevel: 'extreme' })).toBe(false);
    expect(delegation({ ...example, reviewers: {} })).toBe(false);
    expect(delegation({ ...example, rateLimit: { maxRequests: 0, windowSeconds: 60 } })).toBe(false);
  });
});

describe('NamespacedPolicy and NamespacedActorGrant spec schemas', () => {
  it("is Policy's schema itself for NamespacedPolicy", () => {
    expect(TENANCY_SPEC_SCHEMAS.NamespacedPolicy).toBe(policySpecSchema);
  });

  it("is ActorGrant's schema with a local actor id (no slash, short enough to prefix)", () => {
    const grant = valid('NamespacedActorGrant');
    const spec = (id: string) => ({
      actor: { id, subjects: [{ kind: 'ServiceAccount', name: 'bot' }] },
      grants: [],
    });
    expect(grant(spec('bot'))).toBe(true);
    expect(grant(spec('x'.repeat(LOCAL_ACTOR_ID_MAX_LENGTH)))).toBe(true);
    expect(grant(spec('x'.repeat(LOCAL_ACTOR_ID_MAX_LENGTH + 1)))).toBe(false);
    expect(grant(spec('team-b/bot'))).toBe(false);
    expect(grant(spec(''))).toBe(false);
    const { actor: _a, ...sameElsewhere } = TENANCY_SPEC_SCHEMAS.NamespacedActorGrant.properties;
    const { actor: _b, ...clusterElsewhere } = actorGrantSpecSchema.properties;
    expect(sameElsewhere).toEqual(clusterElsewhere);
    expect(sameElsewhere.grants).toBe(clusterElsewhere.grants);
  });
});
