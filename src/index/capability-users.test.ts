import { describe, expect, it } from 'vitest';
import { ArbiterError } from '../model/index.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { capabilityUsers, refuseCapabilityInUse } from './capability-users.js';

const objects = [
  capability('files.read'),
  grant('z-obj', 'bot-b', [{ capability: 'files.read' }, { capability: 'files.write' }]),
  grant('a-obj', 'bot-a', [{ capability: 'files.write' }]),
  grant('y-obj', 'bot-b', [{ capability: 'files.read' }]),
  policy('guard', [
    { capability: 'files.write', outcome: 'DENY' },
    { capability: 'files.read', outcome: 'ESCALATE' },
    { capability: 'files.read', outcome: 'DENY', condition: 'parameters.x == 1' },
  ]),
  policy('disabled', [{ capability: 'files.read', outcome: 'DENY' }], false),
];

describe('capabilityUsers', () => {
  it('lists every grant and rule naming the capability, disabled policies included, in a stable order', () => {
    expect(capabilityUsers(objects, 'files.read')).toEqual({
      grants: [
        { actor_id: 'bot-b', object: 'y-obj' },
        { actor_id: 'bot-b', object: 'z-obj' },
      ],
      rules: [
        { policy: 'disabled', rule_index: 0 },
        { policy: 'guard', rule_index: 1 },
        { policy: 'guard', rule_index: 2 },
      ],
    });
    expect(capabilityUsers(objects, 'files.delete')).toEqual({ grants: [], rules: [] });
  });
});

describe('refuseCapabilityInUse', () => {
  it('passes a capability nothing names', () => {
    expect(() => refuseCapabilityInUse(objects, 'files.delete')).not.toThrow();
  });

  it('refuses with CONFLICT, naming the grants and rules in the message and all of them in details', () => {
    let caught: unknown;
    try {
      refuseCapabilityInUse(objects, 'files.write');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ArbiterError);
    const error = caught as ArbiterError;
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe(
      'capability files.write is still granted to bot-a (ActorGrant a-obj), bot-b (ActorGrant z-obj); named by policy rules guard rule 0: revoke those grants and remove those rules first',
    );
    expect(error.details).toEqual(capabilityUsers(objects, 'files.write'));
  });

  it('names at most ten of each in the message', () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      grant(`g-${String(i).padStart(2, '0')}`, `bot-${String(i).padStart(2, '0')}`, [{ capability: 'x.y' }]),
    );
    expect(() => refuseCapabilityInUse(many, 'x.y')).toThrow(/bot-09 \(ActorGrant g-09\) and 2 more:/);
    expect(() =>
      refuseCapabilityInUse([policy('only-rules', [{ capability: 'x.y', outcome: 'DENY' }])], 'x.y'),
    ).toThrow('capability x.y is still named by policy rules only-rules rule 0: remove those rules first');
  });
});
