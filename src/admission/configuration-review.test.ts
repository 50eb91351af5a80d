import { describe, expect, it } from 'vitest';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
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
