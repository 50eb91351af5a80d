import { describe, expect, it } from 'vitest';
import { leavesStoredIn, nodesStoredFor, popcount, storedPosition } from './tree-layout.js';
import { nodesCompletedBy } from './tree-shape.js';

describe('the append-order layout of tree nodes', () => {
  it('places the nodes each append completes right after the previous ones, with no gap or overlap', () => {
    let next = 0;
    for (let leaf = 0; leaf < 600; leaf++) {
      for (const node of nodesCompletedBy(leaf))
        expect(storedPosition(node), `${node.level}:${node.index}`).toBe(next++);
      expect(nodesStoredFor(leaf + 1)).toBe(next);
    }
  });

  it('counts whole leaves in a run of records, a torn tail included', () => {
    for (let leaves = 0; leaves < 300; leaves++) {
      const records = nodesStoredFor(leaves);
      expect(leavesStoredIn(records)).toBe(leaves);
      // Records of the next leaf but not all of them: still only `leaves` whole leaves.
      for (let extra = 1; extra < nodesStoredFor(leaves + 1) - records; extra++)
        expect(leavesStoredIn(records + extra)).toBe(leaves);
    }
  });

  it('works beyond 2^32 leaves', () => {
    expect(popcount(2 ** 40 + 2 ** 33 + 1)).toBe(3);
    expect(nodesStoredFor(2 ** 40)).toBe(2 ** 41 - 1);
    expect(storedPosition({ level: 40, index: 0 })).toBe(2 ** 41 - 2);
    expect(storedPosition({ level: 0, index: 2 ** 40 })).toBe(2 ** 41 - 1);
    expect(leavesStoredIn(nodesStoredFor(2 ** 45 + 3))).toBe(2 ** 45 + 3);
  });
});
