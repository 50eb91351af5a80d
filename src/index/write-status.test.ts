import { describe, expect, it } from 'vitest';
import { nsPolicy } from '../engine/tenancy-fixtures.js';
import { capability, policy } from '../engine/test-fixtures.js';
import { buildIndex, previewIndex } from './build-index.js';
import { writeStatus } from './write-status.js';

const withQuery = (type: string) =>
  capability('db.query', { parameterSchema: { type: 'object', properties: { query: { type } } } });
const guard = policy('guard', [
  { capability: 'db.query', condition: "parameters.query.startsWith('drop')", outcome: 'DENY' },
]);
const statusOfWriting = (
  current: ReturnType<typeof buildIndex>,
  candidate: Parameters<typeof previewIndex>[1],
) => writeStatus(current, previewIndex(current, candidate), candidate);

describe('writeStatus', () => {
  it('refuses a parameter schema that would take a policy in use out of use', () => {
    const current = buildIndex([withQuery('string'), guard]);
    expect(statusOfWriting(current, withQuery('integer'))).toEqual({
      ready: false,
      reason: 'InvalidSchema',
      field: 'spec.parameterSchema',
      message:
        'spec.parameterSchema would take policy guard out of use (policy guard, rule 0 (capability db.query): ' +
        "the condition does not compile: <input>:1:17: found no matching overload for 'startsWith' applied to int.(string)); " +
        'change the policy first',
    });
    expect(statusOfWriting(current, withQuery('string'))).toMatchObject({ ready: true, reason: 'Accepted' });
  });

  it('refuses registering a capability whose schema breaks a policy that waits for it', () => {
    const current = buildIndex([guard]);
    expect(current.status('Policy', 'guard')?.reason).toBe('UnknownCapability');
    expect(statusOfWriting(current, withQuery('boolean'))).toMatchObject({ reason: 'InvalidSchema' });
    expect(statusOfWriting(current, withQuery('string'))).toMatchObject({ reason: 'Accepted' });
  });

  it('does not blame a capability for a policy that did not compile before it', () => {
    const broken = policy('broken', [{ capability: 'db.query', condition: '1 + "a" == 2', outcome: 'DENY' }]);
    const current = buildIndex([withQuery('string'), broken]);
    expect(statusOfWriting(current, withQuery('integer'))).toMatchObject({ reason: 'Accepted' });
  });

  it('refuses a parameter schema that would take a NamespacedPolicy in use out of use', () => {
    const teamGuard = nsPolicy('team-a', 'guard', guard.spec.rules);
    const current = buildIndex([withQuery('string'), teamGuard]);
    const status = statusOfWriting(current, withQuery('integer'));
    expect(status).toMatchObject({ ready: false, reason: 'InvalidSchema', field: 'spec.parameterSchema' });
    expect(status?.message).toMatch(
      /^spec\.parameterSchema would take NamespacedPolicy team-a\/guard out of use \(/,
    );
    expect(statusOfWriting(current, withQuery('string'))).toMatchObject({ ready: true, reason: 'Accepted' });
  });

  it('does not blame a capability for a NamespacedPolicy that did not compile before it', () => {
    const broken = nsPolicy('team-a', 'broken', [
      { capability: 'db.query', condition: '1 + "a" == 2', outcome: 'DENY' },
    ]);
    const current = buildIndex([withQuery('string'), broken]);
    expect(statusOfWriting(current, withQuery('integer'))).toMatchObject({ reason: 'Accepted' });
  });

  it('gives any other object its own status in the trial index', () => {
    const current = buildIndex([withQuery('string')]);
    const typo = policy('typo', [
      { capability: 'db.query', condition: 'parameters.query > 1', outcome: 'DENY' },
    ]);
    expect(statusOfWriting(current, typo)).toMatchObject({ reason: 'InvalidCondition' });
    expect(statusOfWriting(current, guard)).toMatchObject({ reason: 'Accepted' });
  });
});
