import { describe, expect, it, vi } from 'vitest';
import { capability, policy } from '../engine/test-fixtures.js';
import { buildIndex, previewIndex } from './build-index.js';

describe('previewIndex', () => {
  it('gives the status a candidate would get, leaving the current snapshot as it is', () => {
    const current = buildIndex([
      capability('a.one'),
      policy('p', [{ capability: 'a.one', outcome: 'DENY' }]),
    ]);
    const trial = previewIndex(
      current,
      policy('p', [{ capability: 'a.one', outcome: 'DENY', condition: 'x ==' }]),
    );
    expect(trial.status('Policy', 'p')?.reason).toBe('InvalidCondition');
    expect(current.status('Policy', 'p')?.reason).toBe('Accepted');
    expect(current.rulesFor('a.one')).toHaveLength(1);
  });

  it('does not free what the current snapshot still serves with', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } } };
    const current = buildIndex([
      capability('a.one', { parameterSchema: schema }),
      capability('b.two', { parameterSchema: schema }),
    ]);
    const kept = vi.spyOn(current.capability('a.one')!.validateParameters, 'release');
    const replaced = vi.spyOn(current.capability('b.two')!.validateParameters, 'release');
    const trial = previewIndex(current, capability('b.two', { parameterSchema: { type: 'object' } }));
    expect(trial.status('Capability', 'b-two')?.reason).toBe('Accepted');
    expect(kept).not.toHaveBeenCalled();
    expect(replaced).not.toHaveBeenCalled();
    expect(current.capability('b.two')!.validateParameters({ n: 'x' })).toBe('parameters.n: must be integer');
  });
});
