import { describe, expect, it } from 'vitest';
import { API_VERSION, objectKey } from '../model/index.js';
import { validateConfigObject } from './validate-config-object.js';

const capability = {
  apiVersion: API_VERSION,
  kind: 'Capability',
  metadata: { name: 'payments-refund', creationTimestamp: '2024-01-01T00:00:00Z', managedFields: [{}] },
  spec: { name: 'payments.refund', riskLevel: 'high', parameterSchema: { type: 'object' } },
  status: { conditions: [] },
};

function errorsOf(raw: unknown): string[] {
  const result = validateConfigObject(raw);
  return result.ok ? [] : result.errors;
}

describe('validateConfigObject', () => {
  it('accepts a valid object and returns a normalised copy', () => {
    const result = validateConfigObject(capability);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.object).toEqual({
      apiVersion: API_VERSION,
      kind: 'Capability',
      metadata: { name: 'payments-refund', creationTimestamp: '2024-01-01T00:00:00Z' },
      spec: capability.spec,
    });
    expect(result.object.spec).not.toBe(capability.spec);
  });

  it('shares the spec when asked (an informer cache), still copying the metadata', () => {
    const result = validateConfigObject(capability, { shareSpec: true });
    if (!result.ok) throw new Error(result.errors.join('; '));
    expect(result.object.spec).toBe(capability.spec);
    expect(result.object.metadata).not.toBe(capability.metadata);
  });

  it('turns a Date creationTimestamp (client-node) into ISO 8601', () => {
    const result = validateConfigObject({
      ...capability,
      metadata: { name: 'x', creationTimestamp: new Date('2024-02-03T04:05:06Z') },
    });
    expect(result.ok && result.object.metadata.creationTimestamp).toBe('2024-02-03T04:05:06.000Z');
  });

  it.each([
    [
      'wrong apiVersion',
      { ...capability, apiVersion: 'v1' },
      'apiVersion: must be governance.arbiter.dev/v1alpha1',
    ],
    ['unknown kind', { ...capability, kind: 'Thing' }, 'kind: must be one of Capability, Policy, ActorGrant'],
    ['no metadata', { ...capability, metadata: undefined }, 'metadata: must be object'],
    ['missing name', { ...capability, metadata: {} }, 'metadata.name: is required'],
    [
      'bad name',
      { ...capability, metadata: { name: 'Payments_Refund' } },
      'metadata.name: "Payments_Refund" is not a valid',
    ],
    ['name too long', { ...capability, metadata: { name: 'a'.repeat(254) } }, 'metadata.name:'],
    ['missing spec field', { ...capability, spec: { name: 'a.b' } }, 'spec.riskLevel: is required'],
    [
      'bad enum',
      { ...capability, spec: { name: 'a.b', riskLevel: 'extreme' } },
      'spec.riskLevel: must be one of low, medium, high, critical',
    ],
    [
      'bad capability name',
      { ...capability, spec: { name: 'nodot', riskLevel: 'low' } },
      'spec.name: must match pattern',
    ],
    [
      'unknown field',
      { ...capability, spec: { name: 'a.b', riskLevel: 'low', extra: 1 } },
      'spec.extra: is not an allowed field',
    ],
    [
      'nested rule field',
      {
        apiVersion: API_VERSION,
        kind: 'Policy',
        metadata: { name: 'p' },
        spec: {
          rules: [
            { capability: 'a.b', outcome: 'ALLOW' },
            { capability: 'a.b', outcome: 'MAYBE' },
          ],
        },
      },
      'spec.rules[1].outcome: must be one of ALLOW, DENY, ESCALATE, REQUIRE_CONFIRMATION',
    ],
    [
      'grant time window',
      {
        apiVersion: API_VERSION,
        kind: 'ActorGrant',
        metadata: { name: 'g' },
        spec: {
          actor: { id: 'a' },
          grants: [
            {
              capability: 'a.b',
              constraints: { timeWindow: { start: '25:00', end: '10:00', timezone: 'UTC' } },
            },
          ],
        },
      },
      'spec.grants[0].constraints.timeWindow.start: must match pattern',
    ],
    ['not an object', 'hello', 'object: must be a mapping'],
    ['an array', [], 'object: must be a mapping'],
  ])('rejects %s', (_, raw, expected) => {
    expect(errorsOf(raw).join('\n')).toContain(expected);
  });

  it('accepts a pin of an MCP tool, and rejects one that is not whole or not a SHA-256 digest', () => {
    const pin = { server: 'notes', tool: 'add_note', definitionDigest: `sha256:${'0f'.repeat(32)}` };
    const pinned = (mcp: unknown) => ({ ...capability, spec: { ...capability.spec, mcp } });
    expect(errorsOf(pinned(pin))).toEqual([]);
    expect(errorsOf(pinned({ ...pin, definitionDigest: 'sha256:ABC' })).join('\n')).toContain(
      'spec.mcp.definitionDigest: must match pattern',
    );
    expect(errorsOf(pinned({ server: 'notes', tool: 'add_note' })).join('\n')).toContain('definitionDigest');
    expect(errorsOf(pinned({ ...pin, server: 'Notes' })).join('\n')).toContain('spec.mcp.server');
  });

  it('reports several errors at once', () => {
    expect(errorsOf({ apiVersion: 'x', kind: 'y', metadata: {} })).toHaveLength(3);
  });

  it.each([
    [
      '__proto__ in a parameter schema',
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as Record<string, unknown>,
    ],
    ['constructor deep inside', { type: 'object', properties: { a: { properties: { constructor: {} } } } }],
  ])('rejects %s', (_, parameterSchema) => {
    const errors = errorsOf({ ...capability, spec: { ...capability.spec, parameterSchema } });
    expect(errors[0]).toMatch(
      /^object\.spec\.parameterSchema\.properties\..*(__proto__|constructor): this key is not allowed$/,
    );
  });
});

describe('validateConfigObject: grants keyed by capability', () => {
  it('rejects a capability granted twice in one ActorGrant, as the CRD does', () => {
    const result = validateConfigObject({
      apiVersion: 'governance.arbiter.dev/v1alpha1',
      kind: 'ActorGrant',
      metadata: { name: 'twice' },
      spec: { actor: { id: 'a' }, grants: [{ capability: 'x.y' }, { capability: 'x.y' }] },
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors[0]).toMatch(
      /spec\.grants\[1\]\.capability: x\.y is granted more than once/,
    );
  });
});

describe('validateConfigObject: actor subjects', () => {
  const withSubjects = (subjects: unknown) => ({
    apiVersion: 'governance.arbiter.dev/v1alpha1',
    kind: 'ActorGrant',
    metadata: { name: 'bound' },
    spec: { actor: { id: 'a', subjects }, grants: [] },
  });

  it('accepts ServiceAccounts with a namespace and users without one', () => {
    expect(
      errorsOf(
        withSubjects([
          { kind: 'ServiceAccount', namespace: 'agents', name: 'planner' },
          { kind: 'User', name: 'alice@example.com' },
        ]),
      ),
    ).toEqual([]);
  });

  it('names the subject that breaks RBAC shape', () => {
    expect(
      errorsOf(
        withSubjects([
          { kind: 'ServiceAccount', name: 'planner' },
          { kind: 'User', name: 'alice', namespace: 'x' },
        ]),
      ),
    ).toEqual([
      'spec.actor.subjects[0].namespace: a ServiceAccount subject needs its namespace',
      'spec.actor.subjects[1].namespace: a User subject has no namespace',
    ]);
    expect(errorsOf(withSubjects([{ kind: 'Group', name: 'devs' }]))[0]).toMatch(
      /spec\.actor\.subjects\/0\/kind|spec\.actor\.subjects\[0\]\.kind/,
    );
  });
});

describe('validateConfigObject: the envelope', () => {
  const valid = () => ({
    apiVersion: API_VERSION,
    kind: 'Capability',
    metadata: { name: 'payments-refund' },
    spec: { name: 'payments.refund', riskLevel: 'high' },
  });

  it('rejects null as not a mapping', () => {
    expect(validateConfigObject(null)).toEqual({ ok: false, errors: ['object: must be a mapping'] });
  });

  it('says what apiVersion and kind it got, or that there was none', () => {
    const { apiVersion: _a, kind: _k, ...rest } = valid();
    expect(errorsOf(rest)).toEqual([
      'apiVersion: must be governance.arbiter.dev/v1alpha1, got nothing',
      'kind: must be one of Capability, Policy, ActorGrant, Delegation, NamespacedPolicy, NamespacedActorGrant, got nothing',
    ]);
    expect(errorsOf({ ...valid(), apiVersion: 'v1', kind: 'Thing' })).toEqual([
      'apiVersion: must be governance.arbiter.dev/v1alpha1, got "v1"',
      'kind: must be one of Capability, Policy, ActorGrant, Delegation, NamespacedPolicy, NamespacedActorGrant, got "Thing"',
    ]);
  });

  it.each([
    'a',
    'payments-refund',
    'payments.refund-v2.example',
    'a.b',
    'a.bc',
    'a.b-c',
    '0.9',
    'a'.repeat(253),
  ])('accepts the object name %s', (name) => {
    expect(errorsOf({ ...valid(), metadata: { name } })).toEqual([]);
  });

  it.each(['payments_refund', 'a.-b', 'a.b-', 'a..b', '-a', 'a.', 'a.B', 'a'.repeat(254)])(
    'rejects the object name %s and says what a name may be',
    (name) => {
      expect(errorsOf({ ...valid(), metadata: { name } })).toEqual([
        `metadata.name: ${JSON.stringify(name)} is not a valid object name (lower case letters, digits, '-' and '.', ` +
          'starting and ending with a letter or digit, at most 253 characters)',
      ]);
    },
  );

  it('reports every problem of a spec at once', () => {
    expect(errorsOf({ ...valid(), spec: { name: 'nodot', riskLevel: 'extreme', extra: 1 } })).toHaveLength(3);
  });

  it('keeps only the metadata fields that are set', () => {
    const result = validateConfigObject({
      ...valid(),
      metadata: { name: 'x', generation: 2, labels: { a: 'b' } },
    });
    if (!result.ok) throw new Error(result.errors.join('; '));
    expect(result.object.metadata).toStrictEqual({ name: 'x', generation: 2, labels: { a: 'b' } });
  });

  it('finds a forbidden key inside a list', () => {
    const parameterSchema = JSON.parse(
      '{"type":"object","allOf":[{"type":"object"},{"properties":{"__proto__":{"type":"string"}}}]}',
    ) as Record<string, unknown>;
    expect(errorsOf({ ...valid(), spec: { ...valid().spec, parameterSchema } })).toEqual([
      'object.spec.parameterSchema.allOf[1].properties.__proto__: this key is not allowed',
    ]);
  });
});

describe('validateConfigObject: the tenancy kinds', () => {
  const namespacedPolicy = (metadata: Record<string, unknown>) => ({
    apiVersion: API_VERSION,
    kind: 'NamespacedPolicy',
    metadata,
    spec: { rules: [{ capability: 'db.drop', outcome: 'DENY' }] },
  });
  const delegation = (metadata: Record<string, unknown>) => ({
    apiVersion: API_VERSION,
    kind: 'Delegation',
    metadata,
    spec: { namespaces: ['team-a'], capabilities: ['db.*'], maxRiskLevel: 'high' },
  });

  it('accepts a NamespacedPolicy with its namespace and keeps the namespace', () => {
    const result = validateConfigObject(namespacedPolicy({ name: 'no-drops', namespace: 'team-a' }));
    if (!result.ok) throw new Error(result.errors.join('; '));
    expect(result.object.metadata).toStrictEqual({ name: 'no-drops', namespace: 'team-a' });
    expect(objectKey(result.object)).toBe('NamespacedPolicy/team-a/no-drops');
  });

  it('requires a namespace name on the namespaced kinds', () => {
    expect(errorsOf(namespacedPolicy({ name: 'no-drops' }))).toEqual([
      'metadata.namespace: a NamespacedPolicy needs the namespace it belongs to',
    ]);
    expect(errorsOf(namespacedPolicy({ name: 'no-drops', namespace: 'Team_A' }))[0]).toMatch(
      /^metadata\.namespace: "Team_A" is not a namespace name/,
    );
  });

  it('refuses a namespace on the cluster kinds', () => {
    expect(errorsOf(delegation({ name: 'team-a' }))).toEqual([]);
    expect(errorsOf(delegation({ name: 'team-a', namespace: 'team-a' }))).toEqual([
      'metadata.namespace: a Delegation is cluster-scoped and has no namespace',
    ]);
    expect(errorsOf({ ...capability, metadata: { name: 'x', namespace: 'team-a' } })).toEqual([
      'metadata.namespace: a Capability is cluster-scoped and has no namespace',
    ]);
  });

  it("checks a Delegation's spec against its schema", () => {
    const bad = { ...delegation({ name: 'team-a' }), spec: { namespaces: [], capabilities: ['DB'] } };
    expect(errorsOf(bad).length).toBeGreaterThanOrEqual(3);
  });

  it('checks a NamespacedActorGrant: a local actor id, each capability once, subject namespace optional', () => {
    const grant = (id: string, grants: unknown[]) => ({
      apiVersion: API_VERSION,
      kind: 'NamespacedActorGrant',
      metadata: { name: 'bot', namespace: 'team-a' },
      spec: { actor: { id, subjects: [{ kind: 'ServiceAccount', name: 'bot' }] }, grants },
    });
    expect(errorsOf(grant('bot', [{ capability: 'db.read' }]))).toEqual([]);
    expect(errorsOf(grant('team-a/bot', [{ capability: 'db.read' }]))[0]).toMatch(/^spec\.actor\.id/);
    expect(errorsOf(grant('bot', [{ capability: 'db.read' }, { capability: 'db.read' }]))).toEqual([
      'spec.grants[1].capability: db.read is granted more than once in this object',
    ]);
  });
});
