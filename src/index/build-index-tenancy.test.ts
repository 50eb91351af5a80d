import { describe, expect, it } from 'vitest';
import { delegation, nsGrant, nsPolicy } from '../engine/tenancy-fixtures.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex } from './build-index.js';

const catalogue = [
  capability('db.query', { riskLevel: 'medium' }),
  capability('db.drop', { riskLevel: 'critical' }),
  capability('files.read'),
];

describe('buildIndex: Delegations', () => {
  it('indexes a Delegation by each namespace it lists, Ready', () => {
    const snap = buildIndex([delegation('teams', { namespaces: ['team-a', 'team-b'] })]);
    expect(snap.delegationOf('team-a')?.name).toBe('teams');
    expect(snap.delegationOf('team-b')?.name).toBe('teams');
    expect(snap.delegationOf('team-c')).toBeUndefined();
    expect(snap.status('Delegation', 'teams')).toMatchObject({ ready: true, reason: 'Accepted' });
  });

  it('gives a namespace to the older of two Delegations; the newer gets Conflict naming the older', () => {
    const older = delegation('zz-old', { namespaces: ['team-a'] }, '2023-01-01T00:00:00Z');
    const newer = delegation('aa-new', { namespaces: ['team-b', 'team-a'] }, '2024-01-01T00:00:00Z');
    for (const objects of [
      [older, newer],
      [newer, older],
    ]) {
      const snap = buildIndex(objects);
      expect(snap.delegationOf('team-a')?.name).toBe('zz-old');
      expect(snap.delegationOf('team-b')).toBeUndefined();
      const status = snap.status('Delegation', 'aa-new');
      expect(status).toMatchObject({ ready: false, reason: 'Conflict', field: 'spec.namespaces[1]' });
      expect(status?.message).toContain('zz-old');
    }
  });
});

describe('buildIndex: NamespacedPolicies', () => {
  it("compiles a namespace's rules apart from the cluster's, named ns/name", () => {
    const snap = buildIndex([
      ...catalogue,
      policy('no-drops', [{ capability: 'db.drop', outcome: 'ESCALATE' }]),
      nsPolicy('team-a', 'no-drops', [{ capability: 'db.drop', outcome: 'DENY', condition: 'true' }]),
      nsPolicy('team-b', 'no-drops', [{ capability: 'db.drop', outcome: 'ALLOW' }]),
    ]);
    expect(snap.rulesFor('db.drop').map((r) => [r.policy, r.outcome])).toEqual([['no-drops', 'ESCALATE']]);
    expect(snap.namespaceRulesFor('team-a', 'db.drop').map((r) => [r.policy, r.outcome])).toEqual([
      ['team-a/no-drops', 'DENY'],
    ]);
    expect(snap.namespaceRulesFor('team-b', 'db.drop').map((r) => r.policy)).toEqual(['team-b/no-drops']);
    expect(snap.namespaceRulesFor('team-c', 'db.drop')).toEqual([]);
    expect(snap.policies().map((p) => p.name)).toEqual(['no-drops']);
    expect(snap.status('NamespacedPolicy', 'no-drops', 'team-a')).toMatchObject({ ready: true });
    expect(snap.status('NamespacedPolicy', 'no-drops', 'team-b')).toMatchObject({ ready: true });
    expect(snap.status('NamespacedPolicy', 'no-drops')).toBeUndefined();
  });

  it('does not index a NamespacedPolicy whose condition does not compile, as for a Policy', () => {
    const snap = buildIndex([
      ...catalogue,
      nsPolicy('team-a', 'broken', [{ capability: 'db.drop', outcome: 'DENY', condition: 'nope(' }]),
    ]);
    expect(snap.namespaceRulesFor('team-a', 'db.drop')).toEqual([]);
    const status = snap.status('NamespacedPolicy', 'broken', 'team-a');
    expect(status).toMatchObject({
      ready: false,
      reason: 'InvalidCondition',
      field: 'spec.rules[0].condition',
    });
    expect(status?.message).toContain('team-a/broken');
  });

  it('indexes rules naming unknown capabilities with UnknownCapability, as for a Policy', () => {
    const snap = buildIndex([
      ...catalogue,
      delegation('team-a', { capabilities: ['db.*', 'nope.*'] }),
      nsPolicy('team-a', 'later', [{ capability: 'nope.nope', outcome: 'DENY' }]),
    ]);
    expect(snap.namespaceRulesFor('team-a', 'nope.nope')).toHaveLength(1);
    expect(snap.status('NamespacedPolicy', 'later', 'team-a')).toMatchObject({ reason: 'UnknownCapability' });
  });

  it('marks rules outside the Delegation OutsideDelegation, yet keeps the policy in use', () => {
    const snap = buildIndex([
      ...catalogue,
      delegation('team-a', { capabilities: ['db.*'], maxRiskLevel: 'high' }),
      nsPolicy('team-a', 'mixed', [
        { capability: 'db.query', outcome: 'ALLOW' },
        { capability: 'db.drop', outcome: 'DENY' },
        { capability: 'files.read', outcome: 'DENY' },
      ]),
      nsPolicy('team-a', 'inside', [{ capability: 'db.query', outcome: 'ESCALATE' }]),
      nsPolicy('team-z', 'orphan', [{ capability: 'db.query', outcome: 'DENY' }]),
    ]);
    const mixed = snap.status('NamespacedPolicy', 'mixed', 'team-a');
    expect(mixed).toMatchObject({ ready: true, reason: 'Accepted' });
    expect(mixed?.outsideDelegation).toContain('db.drop');
    expect(mixed?.outsideDelegation).toContain('files.read');
    expect(mixed?.outsideDelegation).not.toContain('db.query');
    expect(snap.namespaceRulesFor('team-a', 'files.read')).toHaveLength(1);
    expect(snap.status('NamespacedPolicy', 'inside', 'team-a')?.outsideDelegation).toBeUndefined();
    expect(snap.status('NamespacedPolicy', 'orphan', 'team-z')?.outsideDelegation).toContain(
      'no Delegation covers namespace team-z',
    );
  });
});

describe('buildIndex: NamespacedActorGrants', () => {
  it('defines the actor N/<id>, apart from cluster grants, with sources ns/name', () => {
    const snap = buildIndex([
      ...catalogue,
      delegation('team-a', {}),
      grant('bot', 'bot', [{ capability: 'files.read' }]),
      nsGrant('team-a', 'bot', 'bot', ['db.query']),
      nsGrant('team-b', 'bot', 'bot', ['db.query']),
    ]);
    expect(snap.grantsFor('bot', 'files.read')).toHaveLength(1);
    expect(snap.grantsFor('team-a/bot', 'db.query')).toEqual([]);
    expect(snap.namespacedGrantsFor('team-a/bot', 'db.query')).toMatchObject([
      { actorId: 'team-a/bot', capability: 'db.query', source: 'team-a/bot', grantIndex: 0 },
    ]);
    expect(snap.namespacedGrantsFor('team-b/bot', 'db.query')).toHaveLength(1);
    expect(snap.status('NamespacedActorGrant', 'bot', 'team-a')).toMatchObject({
      ready: true,
      reason: 'Accepted',
    });
    expect(snap.status('NamespacedActorGrant', 'bot', 'team-a')?.message).toContain('team-a/bot');
  });

  it("binds its namespace's ServiceAccounts to the namespaced actor", () => {
    const snap = buildIndex([
      ...catalogue,
      nsGrant(
        'team-a',
        'bot',
        'bot',
        ['db.query'],
        [
          { kind: 'ServiceAccount', name: 'bot' },
          { kind: 'ServiceAccount', name: 'helper', namespace: 'team-a' },
        ],
      ),
    ]);
    expect(snap.actorOfIdentity('system:serviceaccount:team-a:bot')).toMatchObject({ actorId: 'team-a/bot' });
    expect(snap.actorOfIdentity('system:serviceaccount:team-a:helper')).toMatchObject({
      actorId: 'team-a/bot',
    });
  });

  it('ignores a grant binding a foreign subject: ForeignSubject naming it, no grants, no identities', () => {
    const snap = buildIndex([
      ...catalogue,
      delegation('team-a', {}),
      nsGrant(
        'team-a',
        'thief',
        'bot',
        ['db.query'],
        [
          { kind: 'ServiceAccount', name: 'bot' },
          { kind: 'ServiceAccount', name: 'deployer', namespace: 'team-b' },
        ],
      ),
    ]);
    expect(snap.namespacedGrantsFor('team-a/bot', 'db.query')).toEqual([]);
    expect(snap.actorOfIdentity('system:serviceaccount:team-a:bot')).toBeUndefined();
    expect(snap.actorOfIdentity('system:serviceaccount:team-b:deployer')).toBeUndefined();
    const status = snap.status('NamespacedActorGrant', 'thief', 'team-a');
    expect(status).toMatchObject({ ready: false, reason: 'ForeignSubject', field: 'spec.actor.subjects[1]' });
    expect(status?.message).toContain('ServiceAccount team-b/deployer');
  });

  it('resolves an identity claimed by a cluster and a namespaced grant by age, as between cluster grants', () => {
    const older = { ...grant('cluster-bot', 'ops', [{ capability: 'files.read' }]) };
    older.metadata.creationTimestamp = '2023-01-01T00:00:00Z';
    older.spec.actor.subjects = [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team-a' }];
    const newer = nsGrant('team-a', 'bot', 'bot', ['db.query'], [{ kind: 'ServiceAccount', name: 'bot' }]);
    newer.metadata.creationTimestamp = '2024-01-01T00:00:00Z';
    const snap = buildIndex([...catalogue, older, newer]);
    expect(snap.actorOfIdentity('system:serviceaccount:team-a:bot')?.actorId).toBe('ops');
    expect(snap.status('NamespacedActorGrant', 'bot', 'team-a')).toMatchObject({
      ready: false,
      reason: 'Conflict',
    });
    expect(snap.namespacedGrantsFor('team-a/bot', 'db.query')).toEqual([]);
  });

  it('resolves a claim by a cluster and a namespaced grant of one name and age alike in any order: the cluster one wins', () => {
    const at = '2024-01-01T00:00:00Z';
    const cluster = { ...grant('bot', 'ops', [{ capability: 'files.read' }]) };
    cluster.metadata.creationTimestamp = at;
    cluster.spec.actor.subjects = [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team-a' }];
    const namespaced = nsGrant(
      'team-a',
      'bot',
      'bot',
      ['db.query'],
      [{ kind: 'ServiceAccount', name: 'bot' }],
    );
    namespaced.metadata.creationTimestamp = at;
    for (const objects of [
      [cluster, namespaced],
      [namespaced, cluster],
    ]) {
      const snap = buildIndex([...catalogue, ...objects]);
      expect(snap.actorOfIdentity('system:serviceaccount:team-a:bot')?.actorId).toBe('ops');
      expect(snap.status('NamespacedActorGrant', 'bot', 'team-a')).toMatchObject({ reason: 'Conflict' });
      expect(snap.status('ActorGrant', 'bot')).toMatchObject({ ready: true });
    }
  });

  it('marks grants outside the Delegation (capability or risk) OutsideDelegation, still Ready', () => {
    const snap = buildIndex([
      ...catalogue,
      delegation('team-a', { capabilities: ['db.*'], maxRiskLevel: 'high' }),
      nsGrant('team-a', 'bot', 'bot', ['db.query', 'db.drop', 'files.read']),
      nsGrant('team-a', 'fine', 'fine', ['db.query']),
      nsGrant('team-z', 'bot', 'bot', ['db.query']),
    ]);
    const status = snap.status('NamespacedActorGrant', 'bot', 'team-a');
    expect(status).toMatchObject({ ready: true });
    expect(status?.outsideDelegation).toMatch(/db\.drop \(risk level critical is above high\)/);
    expect(status?.outsideDelegation).toContain('files.read');
    expect(status?.outsideDelegation).not.toContain('db.query');
    expect(snap.status('NamespacedActorGrant', 'fine', 'team-a')?.outsideDelegation).toBeUndefined();
    expect(snap.status('NamespacedActorGrant', 'bot', 'team-z')?.outsideDelegation).toContain(
      'no Delegation covers namespace team-z',
    );
  });

  it('keeps statuses of one name in two namespaces apart, listed with their namespace', () => {
    const snap = buildIndex([nsGrant('team-a', 'bot', 'bot', []), nsGrant('team-b', 'bot', 'bot', ['x.y'])]);
    const entries = snap.statuses().filter((s) => s.kind === 'NamespacedActorGrant');
    expect(entries.map((s) => [s.namespace, s.name])).toEqual([
      ['team-a', 'bot'],
      ['team-b', 'bot'],
    ]);
  });
});
