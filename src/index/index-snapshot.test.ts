import { describe, expect, it, vi } from 'vitest';
import { delegation, nsGrant, nsPolicy } from '../engine/tenancy-fixtures.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import type { PolicyObject } from '../model/index.js';
import { buildIndex } from './build-index.js';

describe('IndexSnapshot listings', () => {
  it('lists capabilities by name, whatever their age', () => {
    const snap = buildIndex([
      capability('z.last', {}, '2020-01-01T00:00:00Z'),
      capability('a.first', {}, '2024-01-01T00:00:00Z'),
      capability('m.middle', {}, '2022-01-01T00:00:00Z'),
    ]);
    expect(snap.capabilities().map((c) => c.name)).toEqual(['a.first', 'm.middle', 'z.last']);
  });

  it('lists policies by name, and the rules of a capability by policy name', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('zulu', [{ capability: 'a.one', outcome: 'DENY' }]),
      policy('alpha', [{ capability: 'a.one', outcome: 'ALLOW' }]),
    ]);
    expect(snap.policies().map((p) => p.name)).toEqual(['alpha', 'zulu']);
    expect(snap.rulesFor('a.one').map((r) => r.policy)).toEqual(['alpha', 'zulu']);
  });

  it('lists actors by id, not by the names of their ActorGrants, and only those holding a grant', () => {
    const snap = buildIndex([
      capability('a.one'),
      grant('a-grant', 'zed', [{ capability: 'a.one' }]),
      grant('b-grant', 'amy', [{ capability: 'a.one' }]),
      grant('c-grant', 'nobody', []),
    ]);
    expect(snap.actors()).toEqual(['amy', 'zed']);
    expect(snap.grantsOfActor('nobody')).toEqual([]);
    expect(snap.counts.actors).toBe(2);
  });

  it('counts what it holds', () => {
    const snap = buildIndex([
      capability('a.one'),
      capability('b.two', { parameterSchema: { type: 'nonsense' } }),
      policy('on', [
        { capability: 'a.one', outcome: 'DENY' },
        { capability: 'a.one', outcome: 'ALLOW' },
      ]),
      policy('off', [{ capability: 'a.one', outcome: 'DENY' }], false),
      policy('broken', [{ capability: 'a.one', outcome: 'DENY', condition: 'parameters.x ==' }]),
      grant('g1', 'agent', [{ capability: 'a.one' }, { capability: 'c.three' }]),
      grant('g2', 'other', [{ capability: 'a.one' }]),
    ]);
    expect(snap.counts).toEqual({
      capabilities: 1,
      policies: 3,
      enabledPolicies: 1,
      rules: 2,
      actorGrantObjects: 2,
      grants: 3,
      actors: 2,
      boundIdentities: 0,
      // b.two's schema, the broken policy, and g1's unknown capability.
      notReady: 3,
      delegations: 0,
      delegatedNamespaces: 0,
      namespacedPolicies: 0,
      namespacedRules: 0,
      namespacedActorGrantObjects: 0,
      namespacedGrants: 0,
      namespacedActors: 0,
    });
  });

  it('counts the tenancy kinds it holds', () => {
    const snap = buildIndex([
      capability('db.query'),
      delegation('teams', { namespaces: ['team-a', 'team-b'] }),
      nsPolicy('team-a', 'p', [
        { capability: 'db.query', outcome: 'DENY' },
        { capability: 'db.query', outcome: 'ESCALATE', condition: 'true' },
      ]),
      nsPolicy('team-b', 'p', [{ capability: 'db.query', outcome: 'DENY' }]),
      nsPolicy('team-b', 'broken', [{ capability: 'db.query', outcome: 'DENY', condition: 'nope(' }]),
      nsGrant('team-a', 'bot', 'bot', ['db.query']),
      nsGrant('team-a', 'bot-more', 'bot', ['db.query']),
      nsGrant('team-b', 'bot', 'bot', ['db.query']),
    ]);
    expect(snap.counts).toMatchObject({
      delegations: 1,
      delegatedNamespaces: 2,
      namespacedPolicies: 3,
      namespacedRules: 3,
      namespacedActorGrantObjects: 3,
      namespacedGrants: 3,
      namespacedActors: 2,
      notReady: 1,
    });
  });

  it('evaluates a policy that does not say whether it is enabled', () => {
    const object = policy('p', [{ capability: 'a.one', outcome: 'DENY' }]);
    const unsaid: PolicyObject = { ...object, spec: { rules: object.spec.rules } };
    const snap = buildIndex([capability('a.one'), unsaid]);
    expect(snap.policy('p')?.enabled).toBe(true);
    expect(snap.rulesFor('a.one')).toHaveLength(1);
  });

  it('gives a capability name claimed at the same time to the object named first, in any order', () => {
    const named = (name: string) => ({
      ...capability('a.one'),
      metadata: { name, creationTimestamp: '2024-01-01T00:00:00Z' },
    });
    for (const objects of [
      [named('first'), named('second')],
      [named('second'), named('first')],
    ]) {
      const snap = buildIndex(objects);
      expect(snap.capability('a.one')?.id).toBe('first');
      expect(snap.status('Capability', 'second')?.reason).toBe('Conflict');
    }
  });

  it('frees the compiled schema of a capability the next build changed or dropped', () => {
    const schema = (max: number) => ({
      type: 'object',
      properties: { n: { type: 'integer', maximum: max } },
    });
    const first = buildIndex([
      capability('a.one', { parameterSchema: schema(1) }),
      capability('b.two', { parameterSchema: schema(2) }),
      capability('c.three', { parameterSchema: schema(3) }),
    ]);
    const released = (name: string) => vi.spyOn(first.capability(name)!.validateParameters, 'release');
    const [kept, changed, dropped] = [released('a.one'), released('b.two'), released('c.three')];
    buildIndex(
      [
        capability('a.one', { parameterSchema: schema(1) }),
        capability('b.two', { parameterSchema: schema(5) }),
      ],
      { previous: first },
    );
    expect(kept).not.toHaveBeenCalled();
    expect(changed).toHaveBeenCalledOnce();
    expect(dropped).toHaveBeenCalledOnce();
  });
});
