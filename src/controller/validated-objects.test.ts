import { describe, expect, it } from 'vitest';
import type { Kind } from '../model/index.js';
import type { RawObject } from './resources.js';
import { ValidatedObjects } from './validated-objects.js';

const policy = (uid: string, generation: number, rules: unknown): RawObject => ({
  apiVersion: 'governance.arbiter.dev/v1alpha1',
  kind: 'Policy',
  metadata: { name: 'p', uid, generation, resourceVersion: String(generation * 10) },
  spec: { rules },
});
const set = (...raws: RawObject[]) => new Map<Kind, RawObject[]>([['Policy', raws]]);
const rule = { capability: 'files.read', outcome: 'DENY' };

describe('ValidatedObjects', () => {
  it('keeps the last valid version of an object whose new version fails the schema', () => {
    const objects = new ValidatedObjects();
    expect(objects.update(set(policy('u1', 1, [rule]))).objects).toHaveLength(1);
    const broken = objects.update(set(policy('u1', 2, 'not a list')));
    expect(broken.objects.map((o) => o.metadata.generation)).toEqual([1]);
    expect(broken.problems.get('Policy/p')).toMatchObject({ generation: 2, servingGeneration: 1 });
    expect(broken.versions.get('Policy/p')).toBe('20');
  });

  it('does not keep a deleted and recreated object (other uid) nor anything never valid', () => {
    const objects = new ValidatedObjects();
    objects.update(set(policy('u1', 1, [rule])));
    const recreated = objects.update(set(policy('u2', 1, 'not a list')));
    expect(recreated.objects).toEqual([]);
    expect(recreated.problems.get('Policy/p')?.servingGeneration).toBeUndefined();
  });
});
