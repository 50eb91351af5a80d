import { describe, expect, it } from 'vitest';
import { proofHashes } from './proof-hashes.js';
import { consistencyPlan, inclusionPlan } from './proof-plan.js';
import { naiveConsistency, naivePath, naiveRoot, numberedLeaves } from './test-naive-tree.js';
import {
  appendLeaf,
  appendLeaves,
  EMPTY_FRONTIER,
  frontierRoot,
  type TreeFrontier,
} from './tree-frontier.js';
import { EMPTY_ROOT, leafHash, type TreeHash } from './tree-hash.js';
import { nodeKey } from './tree-shape.js';
import { verifyConsistency } from './verify-consistency.js';
import { verifyInclusion } from './verify-inclusion.js';

/** The tree as a backend keeps it: every completed perfect subtree, and the frontier. */
function buildTree(leaves: readonly Uint8Array[]) {
  const nodes = new Map<string, TreeHash>();
  const roots: TreeHash[] = [EMPTY_ROOT];
  let frontier: TreeFrontier = EMPTY_FRONTIER;
  for (const leaf of leaves) {
    const appended = appendLeaf(frontier, leafHash(leaf));
    for (const { node, hash } of appended.completed) nodes.set(nodeKey(node), hash);
    frontier = appended.frontier;
    roots.push(frontierRoot(frontier));
  }
  return { lookup: (node: { level: number; index: number }) => nodes.get(nodeKey(node)), roots };
}

const hex = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('hex'));

describe('the Merkle tree against a naive RFC 6962 tree, every size up to 70', () => {
  const MAX = 70;

  it('has the naive root at every size, the empty root included', () => {
    const leaves = numberedLeaves(MAX);
    const { roots } = buildTree(leaves);
    for (let n = 0; n <= MAX; n++)
      expect(roots[n]!.toString('hex'), `size ${n}`).toBe(naiveRoot(leaves.slice(0, n)).toString('hex'));
  });

  it('appends a batch of leaves as one leaf at a time would: the same records in stored order, the same frontier', () => {
    const leaves = numberedLeaves(MAX).map((leaf) => leafHash(leaf));
    // Batches of every length from every starting size, so each run of trailing 1 bits is crossed.
    for (let from = 0; from < 40; from++) {
      let start: TreeFrontier = EMPTY_FRONTIER;
      for (const leaf of leaves.slice(0, from)) start = appendLeaf(start, leaf).frontier;
      for (let count = 0; from + count <= MAX && count <= 33; count++) {
        let frontier = start;
        const records: TreeHash[] = [];
        for (const leaf of leaves.slice(from, from + count)) {
          const appended = appendLeaf(frontier, leaf);
          records.push(...appended.completed.map((c) => c.hash));
          frontier = appended.frontier;
        }
        const batch = appendLeaves(start, leaves.slice(from, from + count));
        expect(hex(batch.records), `${count} from ${from}`).toEqual(hex(records));
        expect(batch.frontier.size).toBe(from + count);
        expect(hex([...batch.frontier.hashes])).toEqual(hex([...frontier.hashes]));
      }
      expect(start.hashes.length, 'the frontier it started from is left as it was').toBe(
        start.size.toString(2).replaceAll('0', '').length,
      );
    }
  });

  it('gives the naive inclusion proof of every leaf at every size, and each verifies', () => {
    const leaves = numberedLeaves(MAX);
    const { lookup, roots } = buildTree(leaves);
    for (let n = 1; n <= MAX; n++) {
      for (let m = 0; m < n; m++) {
        const proof = proofHashes(inclusionPlan(m, n), lookup);
        expect(hex(proof), `leaf ${m} of ${n}`).toEqual(hex(naivePath(m, leaves.slice(0, n))));
        expect(() => verifyInclusion(m, n, leafHash(leaves[m]!), proof, roots[n]!)).not.toThrow();
      }
    }
  });

  it('gives the naive consistency proof between every pair of sizes, and each verifies', () => {
    const leaves = numberedLeaves(MAX);
    const { lookup, roots } = buildTree(leaves);
    for (let n = 0; n <= MAX; n++) {
      for (let m = 0; m <= n; m++) {
        const proof = proofHashes(consistencyPlan(m, n), lookup);
        expect(hex(proof), `${m} -> ${n}`).toEqual(hex(naiveConsistency(m, leaves.slice(0, n))));
        expect(() => verifyConsistency(m, n, proof, roots[m]!, roots[n]!), `${m} -> ${n}`).not.toThrow();
      }
    }
  });

  it('refuses every inclusion proof with a flipped bit, a wrong index, a wrong leaf or a wrong length', () => {
    const leaves = numberedLeaves(40);
    const { lookup, roots } = buildTree(leaves);
    for (let n = 1; n <= 40; n++) {
      for (let m = 0; m < n; m++) {
        const leaf = leafHash(leaves[m]!);
        const proof = proofHashes(inclusionPlan(m, n), lookup);
        const root = roots[n]!;
        for (let i = 0; i < proof.length; i++) {
          const flipped = proof.map((h, j) => (j === i ? flipBit(h, (m + i) % 256) : h));
          expect(() => verifyInclusion(m, n, leaf, flipped, root)).toThrow();
        }
        for (const other of [m - 1, m + 1, n, -1].filter((i) => i !== m)) {
          expect(() => verifyInclusion(other, n, leaf, proof, root), `index ${other}`).toThrow();
        }
        if (n > 1) expect(() => verifyInclusion(m, n, leafHash(leaves[(m + 1) % n]!), proof, root)).toThrow();
        expect(() => verifyInclusion(m, n, leaf, [...proof, root], root)).toThrow();
        expect(() => verifyInclusion(m, n, leaf, [root, ...proof], root)).toThrow();
        if (proof.length > 0) expect(() => verifyInclusion(m, n, leaf, proof.slice(1), root)).toThrow();
        expect(() => verifyInclusion(m, n, leaf, proof, flipBit(root, 0))).toThrow();
      }
    }
  });

  it('refuses every consistency proof with a flipped bit, swapped or wrong roots, or a wrong length', () => {
    const leaves = numberedLeaves(40);
    const { lookup, roots } = buildTree(leaves);
    for (let n = 2; n <= 40; n++) {
      for (let m = 1; m < n; m++) {
        const proof = proofHashes(consistencyPlan(m, n), lookup);
        const [r1, r2] = [roots[m]!, roots[n]!];
        for (let i = 0; i < proof.length; i++) {
          const flipped = proof.map((h, j) => (j === i ? flipBit(h, (m * n + i) % 256) : h));
          expect(() => verifyConsistency(m, n, flipped, r1, r2), `${m} -> ${n} bit in ${i}`).toThrow();
        }
        expect(() => verifyConsistency(m, n, proof, r2, r1)).toThrow();
        expect(() => verifyConsistency(m, n, proof, flipBit(r1, 7), r2)).toThrow();
        expect(() => verifyConsistency(m, n, proof, r1, flipBit(r2, 7))).toThrow();
        expect(() => verifyConsistency(m, n, [], r1, r2)).toThrow();
        expect(() => verifyConsistency(m, n, [...proof, r2], r1, r2)).toThrow();
        expect(() => verifyConsistency(m, n, [r1, ...proof], r1, r2)).toThrow();
        expect(() => verifyConsistency(m, n, proof.slice(0, -1), r1, r2)).toThrow();
        expect(() => verifyConsistency(n, m, proof, r2, r1)).toThrow();
        if (m > 1) expect(() => verifyConsistency(m - 1, n, proof, r1, r2)).toThrow();
      }
    }
  });
});

function flipBit(hash: Buffer, bit: number): Buffer {
  const copy = Buffer.from(hash);
  copy[bit >> 3]! ^= 1 << (bit & 7);
  return copy;
}
