import { describe, expect, it } from 'vitest';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex, compiledArtefactCount } from './build-index.js';

describe('buildIndex', () => {
  it('indexes capabilities by spec.name, sorted, with id and createdAt', () => {
    const snap = buildIndex([capability('b.two'), capability('a.one', {}, '2023-05-05T00:00:00Z')]);
    expect(snap.capabilities().map((c) => [c.name, c.id, c.createdAt])).toEqual([
      ['a.one', 'a-one', '2023-05-05T00:00:00Z'],
      ['b.two', 'b-two', '2024-01-01T00:00:00Z'],
    ]);
    expect(snap.capability('a.one')?.spec.riskLevel).toBe('low');
    expect(snap.capability('nope.nope')).toBeUndefined();
    expect(snap.status('Capability', 'a-one')).toMatchObject({ ready: true, reason: 'Accepted' });
  });

  it('gives a duplicate capability name to the older object and Conflict to the other', () => {
    const older = {
      ...capability('a.one', { riskLevel: 'high' }, '2023-01-01T00:00:00Z'),
      metadata: { name: 'zz-old', creationTimestamp: '2023-01-01T00:00:00Z' },
    };
    const newer = {
      ...capability('a.one', { riskLevel: 'low' }, '2024-01-01T00:00:00Z'),
      metadata: { name: 'aa-new', creationTimestamp: '2024-01-01T00:00:00Z' },
    };
    for (const objects of [
      [older, newer],
      [newer, older],
    ]) {
      const snap = buildIndex(objects);
      expect(snap.capability('a.one')?.id).toBe('zz-old');
      expect(snap.status('Capability', 'aa-new')).toMatchObject({ ready: false, reason: 'Conflict' });
      expect(snap.status('Capability', 'aa-new')?.message).toContain('zz-old');
    }
  });

  it('breaks a creationTimestamp tie by object name', () => {
    const a = {
      ...capability('a.one'),
      metadata: { name: 'first', creationTimestamp: '2024-01-01T00:00:00Z' },
    };
    const b = {
      ...capability('a.one'),
      metadata: { name: 'second', creationTimestamp: '2024-01-01T00:00:00Z' },
    };
    expect(buildIndex([b, a]).capability('a.one')?.id).toBe('first');
  });

  it('marks an invalid parameter schema InvalidSchema and does not index it', () => {
    const snap = buildIndex([
      capability('a.one', { parameterSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } }),
    ]);
    expect(snap.capability('a.one')).toBeUndefined();
    expect(snap.status('Capability', 'a-one')).toMatchObject({ ready: false, reason: 'InvalidSchema' });
  });

  it('keeps building when a parameter schema names a meta-schema it does not know', () => {
    const snap = buildIndex([
      capability('a.one', {
        parameterSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
      }),
      capability('b.two'),
    ]);
    expect(snap.status('Capability', 'a-one')).toMatchObject({ ready: false, reason: 'InvalidSchema' });
    expect(snap.capability('b.two')).toBeDefined();
  });

  it('validates parameters with the compiled schema and names the failing field', () => {
    const snap = buildIndex([
      capability('a.one', {
        parameterSchema: {
          type: 'object',
          required: ['amount'],
          properties: { amount: { type: 'integer', maximum: 10 }, mail: { type: 'string', format: 'email' } },
        },
      }),
    ]);
    const validate = snap.capability('a.one')!.validateParameters;
    expect(validate({ amount: 3 })).toBeUndefined();
    expect(validate({})).toBe('parameters.amount: is required');
    expect(validate({ amount: 11 })).toBe('parameters.amount: must be <= 10');
    expect(validate({ amount: 1, mail: 'nope' })).toContain('parameters.mail');
  });

  it('does not index a policy whose condition does not compile, and names the rule', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('broken', [
        { capability: 'a.one', outcome: 'ALLOW' },
        { capability: 'a.one', condition: 'parameters.x ==', outcome: 'DENY' },
      ]),
    ]);
    const status = snap.status('Policy', 'broken');
    expect(status).toMatchObject({ ready: false, reason: 'InvalidCondition' });
    expect(status?.message).toMatch(
      /^policy broken, rule 1 \(capability a\.one\): the condition does not compile: .+/,
    );
    expect(snap.rulesFor('a.one')).toEqual([]);
    expect(snap.policy('broken')?.status.reason).toBe('InvalidCondition');
  });

  it("type-checks a condition against its capability's parameter schema", () => {
    const schema = { type: 'object', properties: { query: { type: 'string' }, rows: { type: 'integer' } } };
    const snap = buildIndex([
      capability('db.query', { parameterSchema: schema }),
      policy('typed', [{ capability: 'db.query', condition: 'parameters.rows > 100', outcome: 'DENY' }]),
      policy('as-bool', [{ capability: 'db.query', condition: 'parameters.query', outcome: 'DENY' }]),
      policy('mixed', [{ capability: 'db.query', condition: '1 + "a" == 2', outcome: 'DENY' }]),
    ]);
    expect(snap.status('Policy', 'typed')).toMatchObject({ ready: true, message: '1 rule(s) compiled' });
    expect(snap.status('Policy', 'as-bool')).toMatchObject({
      ready: false,
      reason: 'InvalidCondition',
      field: 'spec.rules[0].condition',
      message:
        'policy as-bool, rule 0 (capability db.query): the condition does not compile: ' +
        'a condition must be a bool, but this one is a value of type string',
    });
    expect(snap.status('Policy', 'mixed')?.message).toContain(
      "found no matching overload for '+' applied to (int, string)",
    );
    expect(snap.rulesFor('db.query').map((r) => r.policy)).toEqual(['typed']);
  });

  it('checks a condition again when its capability is registered or its schema changes', () => {
    const rule = { capability: 'db.query', condition: 'parameters.query', outcome: 'DENY' as const };
    const early = buildIndex([policy('p', [rule])]);
    // Not registered yet: parameters are a map of dyn values, and the policy waits with a warning.
    expect(early.status('Policy', 'p')).toMatchObject({ reason: 'UnknownCapability' });
    const typed = (type: string) =>
      capability('db.query', { parameterSchema: { type: 'object', properties: { query: { type } } } });
    const registered = buildIndex([...early.objects(), typed('string')], { previous: early });
    expect(registered.status('Policy', 'p')).toMatchObject({ reason: 'InvalidCondition' });
    const fixed = buildIndex([...registered.objects(), typed('boolean')], { previous: registered });
    expect(fixed.status('Policy', 'p')).toMatchObject({ reason: 'Accepted' });
    expect(fixed.rulesFor('db.query')).toHaveLength(1);
    // The schema unchanged in a new object instance: the compiled policy is reused.
    const again = buildIndex(structuredClone(fixed.objects()), { previous: fixed });
    expect(compiledArtefactCount(again)).toBe(0);
    expect(again.rulesFor('db.query')[0]).toBe(fixed.rulesFor('db.query')[0]);
  });

  it('indexes rules and grants naming an unknown capability, with status UnknownCapability', () => {
    const snap = buildIndex([
      policy('early', [{ capability: 'later.cap', outcome: 'DENY' }]),
      grant('g', 'agent', [{ capability: 'later.cap' }]),
    ]);
    expect(snap.status('Policy', 'early')).toMatchObject({ ready: false, reason: 'UnknownCapability' });
    expect(snap.status('ActorGrant', 'g')).toMatchObject({ ready: false, reason: 'UnknownCapability' });
    expect(snap.rulesFor('later.cap')).toHaveLength(1);
    expect(snap.grantsFor('agent', 'later.cap')).toHaveLength(1);
    const later = buildIndex([...snap.objects(), capability('later.cap')], { previous: snap });
    expect(later.status('Policy', 'early')?.reason).toBe('Accepted');
    expect(later.status('ActorGrant', 'g')?.reason).toBe('Accepted');
  });

  it('marks a grant with an unknown time zone InvalidSpec but indexes it (it will deny)', () => {
    const snap = buildIndex([
      capability('a.one'),
      grant('g', 'agent', [
        {
          capability: 'a.one',
          constraints: { timeWindow: { start: '09:00', end: '17:00', timezone: 'Mars/Olympus' } },
        },
      ]),
    ]);
    expect(snap.status('ActorGrant', 'g')).toMatchObject({ ready: false, reason: 'InvalidSpec' });
    expect(snap.grantsFor('agent', 'a.one')).toHaveLength(1);
  });

  it('keeps disabled policies listed but out of rulesFor', () => {
    const snap = buildIndex([
      capability('a.one'),
      policy('off', [{ capability: 'a.one', outcome: 'DENY' }], false),
      policy('on', [{ capability: 'a.one', outcome: 'ESCALATE', priority: 3 }]),
    ]);
    expect(snap.policies().map((p) => [p.name, p.enabled, p.status.ready])).toEqual([
      ['off', false, true],
      ['on', true, true],
    ]);
    expect(snap.rulesFor('a.one').map((r) => [r.policy, r.priority, r.outcome])).toEqual([
      ['on', 3, 'ESCALATE'],
    ]);
    expect(snap.counts).toMatchObject({ policies: 2, enabledPolicies: 1, rules: 1 });
  });

  it('merges the grants of one actor over several ActorGrant objects', () => {
    const snap = buildIndex([
      grant('b-obj', 'agent', [{ capability: 'x.read' }, { capability: 'x.write' }]),
      grant('a-obj', 'agent', [
        { capability: 'x.read', constraints: { rateLimit: { maxRequests: 1, windowSeconds: 1 } } },
      ]),
      grant('other', 'someone', [{ capability: 'x.read' }]),
    ]);
    expect(snap.grantsOfActor('agent').map((g) => [g.source, g.grantIndex, g.capability])).toEqual([
      ['a-obj', 0, 'x.read'],
      ['b-obj', 0, 'x.read'],
      ['b-obj', 1, 'x.write'],
    ]);
    expect(snap.grantsFor('agent', 'x.read')).toHaveLength(2);
    expect(snap.grantsFor('agent', 'x.delete')).toEqual([]);
    expect(snap.actors()).toEqual(['agent', 'someone']);
    expect(snap.counts).toMatchObject({ actorGrantObjects: 3, grants: 4, actors: 2 });
  });

  it('lets a later object with the same kind and name replace an earlier one', () => {
    const snap = buildIndex([
      capability('a.one', { riskLevel: 'low' }),
      capability('a.one', { riskLevel: 'high' }),
    ]);
    expect(snap.capability('a.one')?.spec.riskLevel).toBe('high');
    expect(snap.objects()).toHaveLength(1);
  });

  it('lists a status for every object, sorted by kind and name', () => {
    const snap = buildIndex([
      policy('p', [{ capability: 'a.one', outcome: 'DENY' }]),
      capability('a.one'),
      grant('g', 'x', []),
    ]);
    expect(snap.statuses().map((s) => `${s.kind}/${s.name}`)).toEqual([
      'ActorGrant/g',
      'Capability/a-one',
      'Policy/p',
    ]);
  });

  it('reuses compiled schemas and conditions of unchanged objects', () => {
    const objects = [
      capability('a.one', { parameterSchema: { type: 'object' } }),
      capability('b.two', { parameterSchema: { type: 'object' } }),
      policy('p1', [{ capability: 'a.one', condition: 'parameters.x == 1', outcome: 'DENY' }]),
      policy('p2', [{ capability: 'b.two', condition: 'parameters.y == 2', outcome: 'DENY' }]),
    ];
    const first = buildIndex(objects);
    expect(compiledArtefactCount(first)).toBe(4);
    // Equal content in new object instances (as a re-list would deliver) is still reused.
    const copies = structuredClone(objects);
    copies[3] = policy('p2', [{ capability: 'b.two', condition: 'parameters.y == 3', outcome: 'DENY' }]);
    const second = buildIndex(copies, { previous: first });
    expect(compiledArtefactCount(second)).toBe(1);
    expect(second.capability('a.one')!.validateParameters).toBe(
      first.capability('a.one')!.validateParameters,
    );
    expect(second.rulesFor('a.one')[0]).toBe(first.rulesFor('a.one')[0]);
    expect(second.rulesFor('b.two')[0]).not.toBe(first.rulesFor('b.two')[0]);
    expect(second.rulesFor('b.two')[0]?.condition?.source).toBe('parameters.y == 3');
  });

  it('rebuilds a large index recompiling only what changed', () => {
    const objects = [];
    for (let i = 0; i < 2000; i++) {
      objects.push(
        capability(`area.op${i}`, {
          parameterSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        }),
      );
      objects.push(
        policy(`p${i}`, [{ capability: `area.op${i}`, condition: `parameters.n > ${i}`, outcome: 'DENY' }]),
      );
      objects.push(grant(`g${i}`, `actor-${i % 100}`, [{ capability: `area.op${i}` }]));
    }
    const first = buildIndex(objects);
    const changed = [...objects];
    changed[1] = policy('p0', [{ capability: 'area.op0', condition: 'parameters.n > 5', outcome: 'DENY' }]);
    const second = buildIndex(changed, { previous: first });
    expect(compiledArtefactCount(second)).toBe(1);
    expect(second.grantsOfActor('actor-7')).toHaveLength(20);
  });
});
