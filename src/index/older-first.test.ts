import { describe, expect, it } from 'vitest';
import type { ObjectMeta } from '../model/index.js';
import { olderFirst } from './older-first.js';

const object = (name: string, creationTimestamp?: string, namespace?: string) => ({
  metadata: {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(creationTimestamp !== undefined ? { creationTimestamp } : {}),
  } as ObjectMeta,
});
const keys = (objects: Array<{ metadata: ObjectMeta }>) =>
  objects.map(({ metadata }) => `${metadata.namespace ?? '-'}/${metadata.name}`);

describe('olderFirst', () => {
  it('orders by creation time, then name; objects without a valid time last', () => {
    const sorted = [
      object('a-undated'),
      object('b', '2024-01-01T00:00:00Z'),
      object('a', '2024-01-01T00:00:00Z'),
      object('z-old', '2023-01-01T00:00:00Z'),
      object('a-bad', 'yesterday'),
    ].sort(olderFirst);
    expect(keys(sorted)).toEqual(['-/z-old', '-/a', '-/b', '-/a-bad', '-/a-undated']);
  });

  it('breaks a tie of time and name by namespace, cluster objects first, whatever the arrival order', () => {
    const at = '2024-01-01T00:00:00Z';
    const all = [object('bot', at, 'team-b'), object('bot', at), object('bot', at, 'team-a')];
    for (const arrival of [all, [...all].reverse(), [all[2]!, all[0]!, all[1]!]])
      expect(keys([...arrival].sort(olderFirst))).toEqual(['-/bot', 'team-a/bot', 'team-b/bot']);
  });
});
