import { describe, expect, it } from 'vitest';
import {
  API_VERSION,
  type ActorGrantObject,
  type CapabilityObject,
  type ConfigObject,
  type PolicyObject,
} from '../model/index.js';
import { configChanges } from './config-changes.js';
import { CHANGED_BY_ANNOTATION } from './config-writer.js';

const capability = (name: string, riskLevel: 'low' | 'high' = 'low'): CapabilityObject => ({
  apiVersion: API_VERSION,
  kind: 'Capability',
  metadata: { name: name.replace('.', '-') },
  spec: { name, riskLevel },
});
const policy = (name: string, generation: number, by?: string): PolicyObject => ({
  apiVersion: API_VERSION,
  kind: 'Policy',
  metadata: {
    name,
    uid: `uid-${name}`,
    generation,
    ...(by ? { annotations: { [CHANGED_BY_ANNOTATION]: by } } : {}),
  },
  spec: { rules: [] },
});
const grants = (actor: string, ...capabilities: string[]): ActorGrantObject => ({
  apiVersion: API_VERSION,
  kind: 'ActorGrant',
  metadata: { name: actor },
  spec: { actor: { id: actor }, grants: capabilities.map((c) => ({ capability: c })) },
});

describe('configuration changes to audit', () => {
  it('records nothing when nothing changed', () => {
    const objects = [capability('a.b'), policy('p', 1), grants('bot', 'a.b')];
    expect(
      configChanges(
        objects,
        objects.map((o) => structuredClone(o)),
        'x',
      ),
    ).toEqual([]);
  });

  it('names creations, updates and deletions with their event types', () => {
    const before = [capability('a.b'), policy('p', 1), policy('gone', 1)];
    const after = [capability('a.b', 'high'), policy('p', 2, 'alice'), policy('new', 1)];
    const changes = configChanges(before, after, 'manifests');
    expect(changes.map((c) => [c.event_type, c.data.name, c.actor_id])).toEqual([
      ['capability.registered', 'a-b', 'manifests'],
      ['policy.created', 'new', 'manifests'],
      ['policy.updated', 'p', 'alice'],
      ['policy.deleted', 'gone', 'manifests'],
    ]);
    expect(changes[3]!.data.object).toBeNull();
  });

  it('records grants per capability, with the grantee as actor_id', () => {
    const changes = configChanges([grants('bot', 'a.b', 'c.d')], [grants('bot', 'a.b', 'e.f')], 'manifests');
    expect(changes.map((c) => [c.event_type, c.actor_id, c.capability])).toEqual([
      ['actor.grant.created', 'bot', 'e.f'],
      ['actor.grant.revoked', 'bot', 'c.d'],
    ]);
    const removed = configChanges([grants('bot', 'a.b')], [], 'manifests');
    expect(removed.map((c) => c.event_type)).toEqual(['actor.grant.revoked']);
  });

  it('compares an object by its spec when it has no generation, as manifests with derived uids', () => {
    const manifest = (riskLevel: 'low' | 'high'): CapabilityObject => ({
      ...capability('a.b', riskLevel),
      metadata: { name: 'a-b', uid: 'derived-uid' },
    });
    expect(configChanges([manifest('low')], [manifest('low')], 'manifests')).toEqual([]);
    const changes = configChanges([manifest('low')], [manifest('high')], 'manifests');
    expect(changes.map((c) => [c.event_type, c.data.name])).toEqual([['capability.registered', 'a-b']]);
  });

  it('lists deletions in name order, whatever the order of the objects before', () => {
    const changes = configChanges([policy('b', 1), policy('a', 1)], [], 'manifests');
    expect(changes.map((c) => [c.event_type, c.data.name])).toEqual([
      ['policy.deleted', 'a'],
      ['policy.deleted', 'b'],
    ]);
  });

  it('credits the caller named by the governance.arbiter.dev/changed-by annotation', () => {
    const annotated: PolicyObject = {
      ...policy('p', 2),
      metadata: { ...policy('p', 2).metadata, annotations: { 'governance.arbiter.dev/changed-by': 'alice' } },
    };
    const [change] = configChanges([policy('p', 1)], [annotated], 'manifests');
    expect(change).toMatchObject({ actor_id: 'alice', data: { changed_by: 'alice' } });
  });

  it('records a changed constraint as a new grant of the capability', () => {
    const limited = grants('bot', 'a.b');
    limited.spec.grants[0]!.constraints = { rateLimit: { maxRequests: 5, windowSeconds: 60 } };
    const changes = configChanges([grants('bot', 'a.b')], [limited], 'manifests');
    expect(changes.map((c) => [c.event_type, c.actor_id, c.capability, c.data.grant])).toEqual([
      ['actor.grant.created', 'bot', 'a.b', limited.spec.grants[0]],
    ]);
  });

  it('moves the grants when an ActorGrant names another actor: granted to the new, revoked from the old', () => {
    const renamed = grants('bot', 'a.b');
    renamed.spec.actor = { id: 'other-bot' };
    const changes = configChanges([grants('bot', 'a.b')], [renamed], 'manifests');
    expect(changes.map((c) => [c.event_type, c.actor_id, c.capability])).toEqual([
      ['actor.grant.created', 'other-bot', 'a.b'],
      ['actor.grant.revoked', 'bot', 'a.b'],
    ]);
  });
});

describe('configuration changes of the tenancy kinds', () => {
  const nsPolicy = (namespace: string, name: string, generation: number): ConfigObject => ({
    apiVersion: API_VERSION,
    kind: 'NamespacedPolicy',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, generation },
    spec: { rules: [] },
  });
  const nsGrant = (namespace: string, localId: string, ...capabilities: string[]): ConfigObject => ({
    apiVersion: API_VERSION,
    kind: 'NamespacedActorGrant',
    metadata: { name: localId, namespace },
    spec: { actor: { id: localId }, grants: capabilities.map((c) => ({ capability: c })) },
  });
  const delegation = (maxRiskLevel: 'low' | 'high', generation: number): ConfigObject => ({
    apiVersion: API_VERSION,
    kind: 'Delegation',
    metadata: { name: 'team-a', uid: 'uid-d', generation },
    spec: { namespaces: ['team-a'], capabilities: ['db.*'], maxRiskLevel },
  });

  it('audits NamespacedPolicies as policies, one name in two namespaces apart, with the namespace on top', () => {
    const changes = configChanges(
      [nsPolicy('team-a', 'p', 1), nsPolicy('team-b', 'p', 1)],
      [nsPolicy('team-a', 'p', 2), nsPolicy('team-c', 'p', 1)],
      'manifests',
    );
    expect(changes.map((c) => [c.event_type, c.namespace, c.data.namespace, c.data.name])).toEqual([
      ['policy.updated', 'team-a', 'team-a', 'p'],
      ['policy.created', 'team-c', 'team-c', 'p'],
      ['policy.deleted', 'team-b', 'team-b', 'p'],
    ]);
  });

  it('audits NamespacedActorGrants as grants to the namespaced actor', () => {
    const changes = configChanges(
      [nsGrant('team-a', 'bot', 'db.query')],
      [nsGrant('team-a', 'bot', 'db.drop')],
      'x',
    );
    expect(changes.map((c) => [c.event_type, c.actor_id, c.capability, c.namespace])).toEqual([
      ['actor.grant.created', 'team-a/bot', 'db.drop', 'team-a'],
      ['actor.grant.revoked', 'team-a/bot', 'db.query', 'team-a'],
    ]);
  });

  it('audits Delegations with delegation.* events and no namespace (cluster-scoped)', () => {
    const changes = [
      ...configChanges([], [delegation('low', 1)], 'x'),
      ...configChanges([delegation('low', 1)], [delegation('high', 2)], 'x'),
      ...configChanges([delegation('high', 2)], [], 'x'),
    ];
    expect(changes.map((c) => [c.event_type, c.namespace])).toEqual([
      ['delegation.created', undefined],
      ['delegation.updated', undefined],
      ['delegation.deleted', undefined],
    ]);
  });

  it('keeps cluster-kind changes free of a namespace', () => {
    expect(configChanges([], [policy('p', 1)], 'x')[0]).not.toHaveProperty('namespace');
  });
});
