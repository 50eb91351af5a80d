import { describe, expect, it } from 'vitest';
import {
  API_VERSION,
  type ActorGrantObject,
  type CapabilityObject,
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
