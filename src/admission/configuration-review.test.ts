import { describe, expect, it } from 'vitest';
import { delegation, nsGrant, nsPolicy } from '../engine/tenancy-fixtures.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import type { ConfigObject } from '../model/index.js';
import { reviewConfiguration } from './configuration-review.js';
import { configurationRequest } from './test-requests.js';

/** The serving index: db.query registered, the planner bound to agent-1. */
const currentIndex = () =>
  buildIndex([
    capability('db.query', {}, '2024-01-01T00:00:00Z'),
    {
      ...grant('agent-1-db', 'agent-1', [{ capability: 'db.query' }]),
      metadata: { name: 'agent-1-db', creationTimestamp: '2024-01-01T00:00:00Z' },
      spec: {
        actor: {
          id: 'agent-1',
          subjects: [{ kind: 'ServiceAccount', namespace: 'agents', name: 'planner' }],
        },
        grants: [{ capability: 'db.query' }],
      },
    },
  ]);

/** As the API server hands it over: with uid, creationTimestamp and managedFields. */
const asK8s = (object: { metadata: object; spec: unknown }): Record<string, unknown> => ({
  ...object,
  metadata: {
    ...object.metadata,
    uid: 'new-uid',
    creationTimestamp: '2026-11-23T00:00:00Z',
    managedFields: [{}],
  },
});

describe('reviewConfiguration', () => {
  it('allows a valid policy', () => {
    const request = configurationRequest(
      asK8s(
        policy('limits', [{ capability: 'db.query', condition: 'parameters.rows > 10', outcome: 'DENY' }]),
      ),
    );
    expect(reviewConfiguration(request, currentIndex(), undefined)).toEqual({ uid: 'cfg-1', allowed: true });
  });

  it('refuses a condition that does not compile with 422 and the message status would show, naming the rule', () => {
    const request = configurationRequest(
      asK8s(policy('broken', [{ capability: 'db.query', condition: 'parameters.rows >', outcome: 'DENY' }])),
    );
    const response = reviewConfiguration(request, currentIndex(), undefined);
    expect(response.allowed).toBe(false);
    expect(response.status?.code).toBe(422);
    expect(response.status?.message).toMatch(
      /^InvalidCondition: policy broken, rule 0 \(capability db\.query\): the condition does not compile/,
    );
  });

  it('allows a rule naming an unknown capability, with a warning', () => {
    const request = configurationRequest(
      asK8s(policy('ahead', [{ capability: 'tickets.create', outcome: 'ALLOW' }])),
    );
    const response = reviewConfiguration(request, currentIndex(), undefined);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      'Policy ahead: rules name capabilities that are not registered: tickets.create; they apply once registered',
    ]);
  });

  it('refuses a schema violation naming the field', () => {
    const bad = asK8s(policy('p', [{ capability: 'db.query', outcome: 'MAYBE' as never }]));
    const response = reviewConfiguration(configurationRequest(bad), currentIndex(), undefined);
    expect(response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(response.status?.message).toContain('spec.rules[0].outcome');
  });

  it('refuses a second Capability claiming a registered name, and a parameter schema that does not work', () => {
    const duplicate = asK8s({ ...capability('db.query'), metadata: { name: 'db-query-2' } });
    expect(
      reviewConfiguration(configurationRequest(duplicate), currentIndex(), undefined).status?.message,
    ).toMatch(/^Conflict: capability db\.query is already defined by the older Capability db-query/);
    const badSchema = asK8s(capability('db.write', { parameterSchema: { type: 'nonsense' } }));
    expect(
      reviewConfiguration(configurationRequest(badSchema), currentIndex(), undefined).status?.message,
    ).toMatch(/^InvalidSchema: spec\.parameterSchema is not a valid JSON Schema/);
  });

  it('refuses an unknown time zone and an identity already bound to another actor', () => {
    const zone = asK8s(
      grant('late', 'agent-2', [
        {
          capability: 'db.query',
          constraints: { timeWindow: { start: '09:00', end: '17:00', timezone: 'Mars/Olympus' } },
        },
      ]),
    );
    expect(
      reviewConfiguration(configurationRequest(zone), currentIndex(), undefined).status?.message,
    ).toMatch(/^InvalidSpec: unknown time zone\(s\) Mars\/Olympus/);
    const stolen = asK8s({
      ...grant('thief', 'agent-2', [{ capability: 'db.query' }]),
      spec: {
        actor: {
          id: 'agent-2',
          subjects: [{ kind: 'ServiceAccount', namespace: 'agents', name: 'planner' }],
        },
        grants: [{ capability: 'db.query' }],
      },
    });
    const response = reviewConfiguration(configurationRequest(stolen), currentIndex(), undefined);
    expect(response.status?.message).toMatch(
      /^Conflict: identity system:serviceaccount:agents:planner is already bound to actor agent-1 by the older ActorGrant agent-1-db/,
    );
  });

  it("lets Arbiter's own writes through, whatever they hold", () => {
    const broken = asK8s(policy('broken', [{ capability: 'db.query', condition: ')(', outcome: 'DENY' }]));
    const own = 'system:serviceaccount:arbiter-system:arbiter';
    const request = configurationRequest(broken, { userInfo: { username: own } });
    expect(reviewConfiguration(request, currentIndex(), own).allowed).toBe(true);
    expect(reviewConfiguration(request, currentIndex(), undefined).allowed).toBe(false);
  });

  it('leaves the serving index as it was', () => {
    const current = currentIndex();
    const before = current.objects().length;
    reviewConfiguration(configurationRequest(asK8s(capability('other.thing'))), current, undefined);
    expect(current.objects()).toHaveLength(before);
    expect(current.capability('other.thing')).toBeUndefined();
  });

  it('refuses an UPDATE as it refuses a CREATE', () => {
    const broken = asK8s(policy('broken', [{ capability: 'db.query', condition: ')(', outcome: 'DENY' }]));
    const request = configurationRequest(broken, { operation: 'UPDATE' });
    expect(reviewConfiguration(request, currentIndex(), undefined)).toMatchObject({
      allowed: false,
      status: { code: 422 },
    });
  });

  it('lets a DELETE through without looking at the object', () => {
    const request = configurationRequest(
      { kind: 'Policy', metadata: { name: 'limits' } },
      { operation: 'DELETE' },
    );
    expect(reviewConfiguration(request, currentIndex(), undefined)).toEqual({ uid: 'cfg-1', allowed: true });
  });

  it('checks writes of other users, and of a user without a name, when Arbiter has a username', () => {
    const broken = asK8s(policy('broken', [{ capability: 'db.query', condition: ')(', outcome: 'DENY' }]));
    const own = 'system:serviceaccount:arbiter-system:arbiter';
    expect(reviewConfiguration(configurationRequest(broken), currentIndex(), own).allowed).toBe(false);
    const anonymous = configurationRequest(broken, { userInfo: {} });
    expect(reviewConfiguration(anonymous, currentIndex(), undefined).allowed).toBe(false);
  });

  it('lists every schema violation, separated by "; "', () => {
    const bad: Record<string, unknown> = asK8s(policy('p', [{ capability: 'db.query', outcome: 'ALLOW' }]));
    bad.apiVersion = 'v9';
    (bad.metadata as Record<string, unknown>).name = 'Not A Name';
    const message =
      reviewConfiguration(configurationRequest(bad), currentIndex(), undefined).status?.message ?? '';
    const errors = message.split('; ');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors[0]).toMatch(/^apiVersion: must be/);
  });
});

describe('reviewConfiguration: the tenancy kinds', () => {
  /** db.query and db.drop registered; team-a delegated db.* up to high risk. */
  const tenancyIndex = () =>
    buildIndex([
      capability('db.query', { riskLevel: 'low' }, '2024-01-01T00:00:00Z'),
      capability('db.drop', { riskLevel: 'critical' }, '2024-01-01T00:00:00Z'),
      delegation('team-a', {}, '2024-01-01T00:00:00Z'),
    ]);
  const review = (object: ConfigObject) =>
    reviewConfiguration(configurationRequest(asK8s(object)), tenancyIndex(), undefined);

  it("allows a NamespacedActorGrant binding its own namespace's ServiceAccount", () => {
    const own = nsGrant('team-a', 'bot', 'bot', ['db.query'], [{ kind: 'ServiceAccount', name: 'bot' }]);
    expect(review(own)).toEqual({ uid: 'cfg-1', allowed: true });
  });

  it.each([
    [{ kind: 'ServiceAccount', namespace: 'team-b', name: 'deployer' }, 'ServiceAccount team-b/deployer'],
    [{ kind: 'User', name: 'alice' }, 'User alice'],
  ] as const)('refuses a NamespacedActorGrant binding %o, saying why', (subject, named) => {
    const response = review(nsGrant('team-a', 'thief', 'thief', ['db.query'], [subject]));
    expect(response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(response.status?.message).toContain(
      `ForeignSubject: binds ${named}, but a NamespacedActorGrant in team-a may bind only ServiceAccounts of team-a`,
    );
  });

  it('warns of rules and grants naming capabilities outside the Delegation, and allows them', () => {
    const policy = review(nsPolicy('team-a', 'careful', [{ capability: 'db.drop', outcome: 'DENY' }]));
    expect(policy).toEqual({
      uid: 'cfg-1',
      allowed: true,
      warnings: [
        'NamespacedPolicy team-a/careful: Delegation team-a does not let namespace team-a govern: db.drop (risk level critical is above high)',
      ],
    });
    const grant = review(nsGrant('team-a', 'bot', 'bot', ['db.query', 'files.read']));
    expect(grant.allowed).toBe(true);
    expect(grant.warnings).toEqual([
      'NamespacedActorGrant team-a/bot: grants name capabilities that are not registered: files.read; they apply once registered',
      'NamespacedActorGrant team-a/bot: Delegation team-a does not let namespace team-a govern: files.read (not delegated)',
    ]);
  });

  it('warns when no Delegation covers the namespace', () => {
    const response = review(nsGrant('team-b', 'bot', 'bot', ['db.query']));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      'NamespacedActorGrant team-b/bot: no Delegation covers namespace team-b, so it governs none of: db.query',
    ]);
  });

  it('refuses a Delegation listing a namespace an older one lists, naming it', () => {
    const response = review(delegation('team-a-too', { namespaces: ['team-a', 'team-c'] }));
    expect(response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(response.status?.message).toMatch(/^Conflict: .*team-a/);
  });

  it('refuses a parameter schema that would take a NamespacedPolicy in use out of use', () => {
    const guard = nsPolicy('team-a', 'guard', [
      { capability: 'db.query', condition: "parameters.query.startsWith('drop')", outcome: 'DENY' },
    ]);
    const withQuery = (type: string) =>
      capability('db.query', {
        riskLevel: 'low',
        parameterSchema: { type: 'object', properties: { query: { type } } },
      });
    const index = buildIndex([withQuery('string'), delegation('team-a', {}), guard]);
    const response = reviewConfiguration(configurationRequest(asK8s(withQuery('integer'))), index, undefined);
    expect(response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(response.status?.message).toMatch(
      /^InvalidSchema: spec\.parameterSchema would take NamespacedPolicy team-a\/guard out of use/,
    );
  });

  it('refuses a namespaced kind without a namespace, as the index does', () => {
    const { namespace: _namespace, ...metadata } = nsPolicy('team-a', 'p', []).metadata;
    const response = review({ ...nsPolicy('team-a', 'p', []), metadata } as unknown as ConfigObject);
    expect(response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(response.status?.message).toContain('metadata.namespace');
  });
});
