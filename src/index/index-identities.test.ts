import { describe, expect, it } from 'vitest';
import { capability, grant } from '../engine/test-fixtures.js';
import type { ActorGrantObject, ActorSubject } from '../model/index.js';
import { buildIndex } from './build-index.js';

function bound(
  name: string,
  actorId: string,
  subjects: ActorSubject[],
  creationTimestamp?: string,
): ActorGrantObject {
  const object = grant(name, actorId, [{ capability: 'k8s.configmaps.create' }]);
  return {
    ...object,
    metadata: { name, ...(creationTimestamp ? { creationTimestamp } : {}) },
    spec: { ...object.spec, actor: { ...object.spec.actor, subjects } },
  };
}

const planner: ActorSubject = { kind: 'ServiceAccount', namespace: 'agents', name: 'planner' };
const alice: ActorSubject = { kind: 'User', name: 'alice' };

describe('identity bindings', () => {
  it('binds ServiceAccounts by their API server username and users by name', () => {
    const snap = buildIndex([capability('k8s.configmaps.create'), bound('g', 'agent-7', [planner, alice])]);
    expect(snap.actorOfIdentity('system:serviceaccount:agents:planner')).toMatchObject({
      actorId: 'agent-7',
      source: 'g',
    });
    expect(snap.actorOfIdentity('alice')?.actorId).toBe('agent-7');
    expect(snap.actorOfIdentity('system:serviceaccount:agents:other')).toBeUndefined();
    expect(snap.actorOfIdentity('planner')).toBeUndefined();
    expect(snap.boundIdentities()).toEqual(['alice', 'system:serviceaccount:agents:planner']);
  });

  it('gives an identity bound to two actors to the older ActorGrant; the newer is Conflict and unused', () => {
    const older = bound('zz-older', 'agent-1', [planner], '2024-01-01T00:00:00Z');
    const newer = bound('aa-newer', 'agent-2', [planner, alice], '2024-02-01T00:00:00Z');
    for (const objects of [
      [older, newer],
      [newer, older],
    ]) {
      const snap = buildIndex([capability('k8s.configmaps.create'), ...objects]);
      expect(snap.actorOfIdentity('system:serviceaccount:agents:planner')?.actorId).toBe('agent-1');
      // Nothing of the losing object is used: neither its other identities nor its grants.
      expect(snap.actorOfIdentity('alice')).toBeUndefined();
      expect(snap.grantsOfActor('agent-2')).toEqual([]);
      const status = snap.status('ActorGrant', 'aa-newer');
      expect(status).toMatchObject({ ready: false, reason: 'Conflict' });
      expect(status?.message).toContain('system:serviceaccount:agents:planner');
      expect(status?.message).toContain('zz-older');
      expect(snap.status('ActorGrant', 'zz-older')).toMatchObject({ ready: true });
    }
  });

  it('lets several ActorGrants of one actor bind the same identity', () => {
    const snap = buildIndex([
      capability('k8s.configmaps.create'),
      bound('a', 'agent-1', [planner], '2024-01-01T00:00:00Z'),
      bound('b', 'agent-1', [planner], '2024-02-01T00:00:00Z'),
    ]);
    expect(snap.status('ActorGrant', 'b')).toMatchObject({ ready: true });
    expect(snap.actorOfIdentity('system:serviceaccount:agents:planner')?.source).toBe('a');
  });

  it('counts objects without a creationTimestamp as the newest', () => {
    const snap = buildIndex([
      capability('k8s.configmaps.create'),
      bound('a-no-timestamp', 'agent-2', [alice]),
      bound('b-dated', 'agent-1', [alice], '2024-01-01T00:00:00Z'),
    ]);
    expect(snap.actorOfIdentity('alice')?.actorId).toBe('agent-1');
    expect(snap.status('ActorGrant', 'a-no-timestamp')?.reason).toBe('Conflict');
  });
});
