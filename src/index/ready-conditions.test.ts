import { describe, expect, it } from 'vitest';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import type { ActorGrantObject, ActorSubject } from '../model/index.js';
import { buildIndex } from './build-index.js';

// The Ready condition a GitOps user reads on each object: reason, message, and the field to fix.

function withSubjects(
  name: string,
  actorId: string,
  subjects: ActorSubject[],
  creationTimestamp: string,
): ActorGrantObject {
  const object = grant(name, actorId, [{ capability: 'a.one' }]);
  return {
    ...object,
    metadata: { name, creationTimestamp },
    spec: { ...object.spec, actor: { ...object.spec.actor, subjects } },
  };
}

describe('Ready conditions', () => {
  it('says what an accepted object provides, with no field to fix', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('on', [
        { capability: 'a.one', outcome: 'DENY' },
        { capability: 'a.one', outcome: 'ALLOW' },
      ]),
      policy('off', [{ capability: 'a.one', outcome: 'DENY' }], false),
      grant('g', 'agent', [{ capability: 'a.one' }, { capability: 'a.one' }]),
    ]);
    expect(snap.status('Capability', 'a-one')).toStrictEqual({
      ready: true,
      reason: 'Accepted',
      message: 'capability a.one is registered',
    });
    expect(snap.status('Policy', 'on')).toStrictEqual({
      ready: true,
      reason: 'Accepted',
      message: '2 rule(s) compiled',
    });
    expect(snap.status('Policy', 'off')?.message).toBe('valid; disabled, so its rules are not evaluated');
    expect(snap.status('ActorGrant', 'g')?.message).toBe('2 grant(s) for actor agent');
  });

  it('reports the generation it observed when the object has one', () => {
    const object = capability('a.one');
    const snap = buildIndex([{ ...object, metadata: { ...object.metadata, generation: 7 } }]);
    expect(snap.status('Capability', 'a-one')).toMatchObject({ observedGeneration: 7 });
    expect(Object.keys(buildIndex([object]).status('Capability', 'a-one')!)).not.toContain(
      'observedGeneration',
    );
  });

  it('points at the parameter schema that does not compile', () => {
    const snap = buildIndex([capability('a.one', { parameterSchema: { type: 'nonsense' } })]);
    expect(snap.status('Capability', 'a-one')).toMatchObject({
      reason: 'InvalidSchema',
      field: 'spec.parameterSchema',
      message: expect.stringMatching(/^spec\.parameterSchema is not a valid JSON Schema: schema\/type /),
    });
  });

  it('points at the name a newer capability claims', () => {
    const snap = buildIndex([
      capability('a.one', {}, '2023-01-01T00:00:00Z'),
      {
        ...capability('a.one'),
        metadata: { name: 'a-one-again', creationTimestamp: '2024-01-01T00:00:00Z' },
      },
    ]);
    expect(snap.status('Capability', 'a-one-again')).toMatchObject({
      reason: 'Conflict',
      field: 'spec.name',
      message: 'capability a.one is already defined by the older Capability a-one',
    });
  });

  it('points at the rule whose condition does not compile', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('p', [
        { capability: 'a.one', outcome: 'DENY', condition: 'parameters.x == 1' },
        { capability: 'a.one', outcome: 'DENY', condition: 'parameters.x ==' },
      ]),
    ]);
    expect(snap.status('Policy', 'p')).toMatchObject({
      reason: 'InvalidCondition',
      field: 'spec.rules[1].condition',
    });
  });

  it('lists every unregistered capability a policy names and points at the first', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('p', [
        { capability: 'a.one', outcome: 'DENY' },
        { capability: 'b.two', outcome: 'DENY' },
        { capability: 'c.three', outcome: 'DENY' },
        { capability: 'b.two', outcome: 'ALLOW' },
      ]),
    ]);
    expect(snap.status('Policy', 'p')).toStrictEqual({
      ready: false,
      reason: 'UnknownCapability',
      message: 'rules name capabilities that are not registered: b.two, c.three; they apply once registered',
      field: 'spec.rules[1].capability',
    });
  });

  it('lists every unregistered capability a grant names and points at the first', () => {
    const snap = buildIndex([
      capability('a.one'),
      grant('g', 'agent', [{ capability: 'a.one' }, { capability: 'b.two' }, { capability: 'c.three' }]),
    ]);
    expect(snap.status('ActorGrant', 'g')).toStrictEqual({
      ready: false,
      reason: 'UnknownCapability',
      message: 'grants name capabilities that are not registered: b.two, c.three; they apply once registered',
      field: 'spec.grants[1].capability',
    });
  });

  it('lists every unknown time zone once and points at the first grant using one', () => {
    const window = (timezone: string) => ({ timeWindow: { start: '09:00', end: '17:00', timezone } });
    const snap = buildIndex([
      capability('a.one'),
      capability('b.two'),
      capability('c.three'),
      capability('d.four'),
      grant('g', 'agent', [
        { capability: 'a.one' },
        { capability: 'b.two', constraints: window('Europe/Berlin') },
        { capability: 'c.three', constraints: window('Mars/Olympus') },
        { capability: 'd.four', constraints: window('Moon/Base') },
        { capability: 'e.five', constraints: window('Mars/Olympus') },
      ]),
    ]);
    expect(snap.status('ActorGrant', 'g')).toStrictEqual({
      ready: false,
      reason: 'InvalidSpec',
      message: 'unknown time zone(s) Mars/Olympus, Moon/Base; the grants using them deny until fixed',
      field: 'spec.grants[2].constraints.timeWindow.timezone',
    });
  });

  it('accepts a grant whose time windows use known zones', () => {
    const snap = buildIndex([
      capability('a.one'),
      grant('g', 'agent', [
        {
          capability: 'a.one',
          constraints: { timeWindow: { start: '09:00', end: '17:00', timezone: 'Europe/Berlin' } },
        },
      ]),
    ]);
    expect(snap.status('ActorGrant', 'g')).toMatchObject({ ready: true, reason: 'Accepted' });
  });

  it('points at the subject another actor already holds', () => {
    const planner: ActorSubject = { kind: 'ServiceAccount', namespace: 'agents', name: 'planner' };
    const alice: ActorSubject = { kind: 'User', name: 'alice' };
    const snap = buildIndex([
      capability('a.one'),
      withSubjects('older', 'agent-1', [planner], '2024-01-01T00:00:00Z'),
      withSubjects('newer', 'agent-2', [alice, planner], '2024-02-01T00:00:00Z'),
    ]);
    expect(snap.status('ActorGrant', 'newer')).toStrictEqual({
      ready: false,
      reason: 'Conflict',
      message:
        'identity system:serviceaccount:agents:planner is already bound to actor agent-1 by the older ' +
        'ActorGrant older; this ActorGrant is not used until that is resolved',
      field: 'spec.actor.subjects[1]',
    });
  });
});
