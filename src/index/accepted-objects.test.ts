import { describe, expect, it } from 'vitest';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { acceptedObjects } from './accepted-objects.js';
import { buildIndex } from './build-index.js';

describe('acceptedObjects', () => {
  it('keeps the objects that take effect, including those waiting for a capability', () => {
    const snap = buildIndex([
      capability('a.one'),
      capability('b.two', { parameterSchema: { type: 'nonsense' } }),
      policy('ok', [{ capability: 'a.one', outcome: 'DENY' }]),
      policy('broken', [{ capability: 'a.one', outcome: 'DENY', condition: 'parameters.x ==' }]),
      grant('waiting', 'agent', [{ capability: 'later.cap' }]),
    ]);
    expect(acceptedObjects(snap).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Capability/a-one',
      'Policy/ok',
      'ActorGrant/waiting',
    ]);
  });
});
