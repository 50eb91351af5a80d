import { describe, expect, it } from 'vitest';
import { StoredAuditTree, TreeBeyondSizeError } from './audit-tree.js';
import { naiveConsistency, naivePath, naiveRoot, numberedLeaves } from './merkle/test-naive-tree.js';
import { MemoryNodeStore } from './test-node-store.js';

describe('StoredAuditTree', () => {
  const leaves = numberedLeaves(13);
  const tree = new StoredAuditTree(new MemoryNodeStore().append(leaves));

  it('gives the roots and proofs of the naive tree at every size it holds', async () => {
    expect(await tree.size()).toBe(13);
    for (let size = 0; size <= 13; size += 1) {
      expect((await tree.root(size)).equals(naiveRoot(leaves.slice(0, size))), `root ${size}`).toBe(true);
      if (size > 0)
        expect(await tree.inclusionProof(size - 1, size)).toEqual(naivePath(size - 1, leaves.slice(0, size)));
      expect(await tree.consistencyProof(size, 13)).toEqual(naiveConsistency(size, leaves));
    }
  });

  it.each([14, -1, 1.5, Number.NaN, Infinity])('refuses size %s, naming what it holds', async (size) => {
    const refusal = new TreeBeyondSizeError(`the tree holds 13 leaves, not ${size}`);
    await expect(tree.root(size)).rejects.toThrow(refusal);
    await expect(tree.root(size)).rejects.toBeInstanceOf(TreeBeyondSizeError);
    await expect(tree.inclusionProof(0, size)).rejects.toThrow(refusal);
    await expect(tree.consistencyProof(1, size)).rejects.toThrow(refusal);
  });

  it('names a node its store has not got', async () => {
    const store = new MemoryNodeStore().append(leaves);
    store.lose({ level: 3, index: 0 });
    const lagging = new StoredAuditTree(store);
    await expect(lagging.root(13)).rejects.toThrow(new TreeBeyondSizeError('tree node 3:0 is not stored'));
    await expect(lagging.root(13)).rejects.toBeInstanceOf(TreeBeyondSizeError);
  });
});
