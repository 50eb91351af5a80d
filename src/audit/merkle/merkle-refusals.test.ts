import { describe, expect, it } from 'vitest';
import { foldSubtrees } from './proof-hashes.js';
import { consistencyPlan, inclusionPlan } from './proof-plan.js';
import { naiveConsistency, naivePath, naiveRoot, numberedLeaves } from './test-naive-tree.js';
import { EMPTY_FRONTIER, frontierRoot } from './tree-frontier.js';
import { EMPTY_ROOT, leafHash } from './tree-hash.js';
import { verifyConsistency } from './verify-consistency.js';
import { verifyInclusion } from './verify-inclusion.js';

// What a verifier is told when a proof or its sizes are wrong: `arbiter audit verify-proof`
// and `verify-consistency` print these reasons as they are.

const leaves = numberedLeaves(8);
const root = (n: number) => naiveRoot(leaves.slice(0, n));

describe('inclusion proofs: the reason for each refusal', () => {
  const leaf = leafHash(leaves[2]!);
  const path = naivePath(2, leaves);

  it.each([
    [-1, 8, 'leaf index -1 or tree size 8 is not a valid size'],
    [1.5, 8, 'leaf index 1.5 or tree size 8 is not a valid size'],
    [2, Number.NaN, 'leaf index 2 or tree size NaN is not a valid size'],
    [8, 8, 'leaf index 8 is beyond tree size 8'],
  ])('refuses leaf %s of a tree of %s', (index, size, reason) => {
    expect(() => verifyInclusion(index, size, leaf, path, root(8))).toThrow(reason);
  });

  it('says whether the proof is too long, too short, or leads elsewhere', () => {
    expect(() => verifyInclusion(2, 8, leaf, [...path, path[0]!], root(8))).toThrow(
      'the proof is longer than the tree is deep',
    );
    expect(() => verifyInclusion(2, 8, leaf, path.slice(0, -1), root(8))).toThrow(
      'the proof is shorter than the tree is deep',
    );
    expect(() => verifyInclusion(2, 8, leaf, path, root(7))).toThrow('the proof leads to a different root');
  });

  it.each([
    [-1, 8],
    [8, 8],
    [0, 0],
    [0.5, 8],
    [1, 8.5],
  ])('plans no path for leaf %s of a tree of %s', (index, size) => {
    expect(() => inclusionPlan(index, size)).toThrow(`leaf ${index} is not in a tree of ${size}`);
  });
});

describe('consistency proofs: the reason for each refusal', () => {
  const proof = naiveConsistency(3, leaves);

  it.each([
    [-1, 8, 'sizes -1 and 8 are not valid tree sizes'],
    [3, 8.5, 'sizes 3 and 8.5 are not valid tree sizes'],
    [Number.NaN, 8, 'sizes NaN and 8 are not valid tree sizes'],
    [8, 3, 'size 3 is smaller than size 8'],
  ])('refuses sizes %s to %s', (from, to, reason) => {
    expect(() => verifyConsistency(from, to, proof, root(3), root(8))).toThrow(reason);
  });

  it('says which root the proof fails to reach', () => {
    expect(() => verifyConsistency(3, 8, proof, root(3), root(7))).toThrow(
      'the proof does not lead to the newer root',
    );
    expect(() => verifyConsistency(3, 8, proof, root(2), root(8))).toThrow(
      'the proof does not lead to the older root',
    );
  });

  it.each([
    [-1, 8],
    [5, 3],
    [1.5, 3],
    [1, 3.5],
  ])('plans no proof from size %s to %s', (from, to) => {
    expect(() => consistencyPlan(from, to)).toThrow(`no consistency proof from size ${from} to ${to}`);
  });
});

describe('the empty tree', () => {
  it('has the SHA-256 of nothing as its root, from the empty frontier too', () => {
    expect(EMPTY_ROOT.toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(frontierRoot(EMPTY_FRONTIER).equals(EMPTY_ROOT)).toBe(true);
  });

  it('has no subtrees to fold', () => {
    expect(() => foldSubtrees([])).toThrow('no subtrees to fold');
  });
});
