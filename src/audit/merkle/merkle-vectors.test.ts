import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { foldSubtrees, proofHashes } from './proof-hashes.js';
import { consistencyPlan, inclusionPlan } from './proof-plan.js';
import { appendLeaf, EMPTY_FRONTIER, frontierRoot } from './tree-frontier.js';
import { EMPTY_ROOT, leafHash, nodeHash, type TreeHash } from './tree-hash.js';
import { type NodeId, perfectSubtrees } from './tree-shape.js';
import { verifyConsistency } from './verify-consistency.js';
import { rootFromInclusionProof, verifyInclusion } from './verify-inclusion.js';

// Public facts: the eight leaves of the RFC 6962 reference tree used by Certificate
// Transparency and transparency-dev/merkle, the roots at each size, and the happy-path
// proofs of transparency-dev/merkle's testdata/ (inclusion/0-4, consistency/0-4).
const RFC6962_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
];
const RFC6962_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

const INCLUSION = [
  {
    leafIdx: 0,
    treeSize: 1,
    root: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    leafHash: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    proof: [],
  },
  {
    leafIdx: 0,
    treeSize: 8,
    root: 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=',
    leafHash: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    proof: [
      'lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=',
      'Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=',
      'a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=',
    ],
  },
  {
    leafIdx: 5,
    treeSize: 8,
    root: 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=',
    leafHash: 'QnGia+DYqE8L1UyMMC58s6O10fpngKQLzOKHNHfatlg=',
    proof: [
      'vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms=',
      'yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=',
      '037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=',
    ],
  },
  {
    leafIdx: 2,
    treeSize: 3,
    root: 'rra8/idLcKFPsGel5VeCZNsPqbUa9eC6FZFY8yngbnc=',
    leafHash: 'ApjRIpBtz8EIkstTpzmS/FufST6kybrbJ7eRtBJ6f+c=',
    proof: ['+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU='],
  },
  {
    leafIdx: 1,
    treeSize: 5,
    root: 'Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ=',
    leafHash: 'lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=',
    proof: [
      'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
      'Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=',
      'vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms=',
    ],
  },
];

const CONSISTENCY = [
  {
    size1: 1,
    size2: 1,
    root1: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    root2: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    proof: [],
  },
  {
    size1: 1,
    size2: 8,
    root1: 'bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=',
    root2: 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=',
    proof: [
      'lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=',
      'Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=',
      'a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=',
    ],
  },
  {
    size1: 6,
    size2: 8,
    root1: 'duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=',
    root2: 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=',
    proof: [
      'DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=',
      'yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=',
      '037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=',
    ],
  },
  {
    size1: 2,
    size2: 5,
    root1: '+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU=',
    root2: 'Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ=',
    proof: ['Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=', 'vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms='],
  },
  {
    size1: 6,
    size2: 7,
    root1: 'duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=',
    root2: '3bib5AOAnjJXUNPSY814kpwpQreUKjS3fhIslZSnTIw=',
    proof: [
      'DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=',
      'sIaT7C5yFZcTBkHoIR5+7cy0wmQTlj7ubB4u0W/7Gl8=',
      '037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=',
    ],
  },
];

const b64 = (text: string) => Buffer.from(text, 'base64');

function referenceTree() {
  const nodes = new Map<string, TreeHash>();
  const roots: TreeHash[] = [];
  let frontier = EMPTY_FRONTIER;
  for (const leaf of RFC6962_LEAVES) {
    const appended = appendLeaf(frontier, leafHash(Buffer.from(leaf, 'hex')));
    for (const { node, hash } of appended.completed) nodes.set(`${node.level}:${node.index}`, hash);
    frontier = appended.frontier;
    roots.push(frontierRoot(frontier));
  }
  return { roots, lookup: (node: NodeId) => nodes.get(`${node.level}:${node.index}`) };
}

describe('leaf and node hashes', () => {
  it('hash a string leaf as its UTF-8 bytes, and match SHA-256 of the prefixed input computed independently', () => {
    const text = 'entry \u00e9\u4e2d\u{1F600} \u0000 end';
    const bytes = Buffer.from(text, 'utf8');
    const independent = createHash('sha256')
      .update(Buffer.concat([Buffer.from([0]), bytes]))
      .digest();
    expect(leafHash(text).equals(independent)).toBe(true);
    expect(leafHash(bytes).equals(independent)).toBe(true);
    expect(
      leafHash('').equals(
        createHash('sha256')
          .update(Buffer.from([0]))
          .digest(),
      ),
    ).toBe(true);
    const [left, right] = [leafHash('a'), leafHash('b')];
    const node = createHash('sha256')
      .update(Buffer.concat([Buffer.from([1]), left, right]))
      .digest();
    expect(nodeHash(left, right).equals(node)).toBe(true);
    expect(nodeHash(right, left).equals(node)).toBe(false);
  });
});

describe('the Merkle tree against public RFC 6962 vectors', () => {
  it('has the published root at each size of the reference tree, and SHA-256 of nothing when empty', () => {
    expect(referenceTree().roots.map((r) => r.toString('hex'))).toEqual(RFC6962_ROOTS);
    expect(EMPTY_ROOT.toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it.each(INCLUSION)('verifies and reproduces inclusion of leaf $leafIdx in size $treeSize', (vector) => {
    const proof = vector.proof.map(b64);
    expect(() =>
      verifyInclusion(vector.leafIdx, vector.treeSize, b64(vector.leafHash), proof, b64(vector.root)),
    ).not.toThrow();
    const ours = proofHashes(inclusionPlan(vector.leafIdx, vector.treeSize), referenceTree().lookup);
    expect(ours.map((h) => h.toString('base64'))).toEqual(vector.proof);
  });

  it.each(CONSISTENCY)('verifies and reproduces consistency from $size1 to $size2', (vector) => {
    const proof = vector.proof.map(b64);
    expect(() =>
      verifyConsistency(vector.size1, vector.size2, proof, b64(vector.root1), b64(vector.root2)),
    ).not.toThrow();
    const ours = proofHashes(consistencyPlan(vector.size1, vector.size2), referenceTree().lookup);
    expect(ours.map((h) => h.toString('base64'))).toEqual(vector.proof);
  });

  it('refuses the hostile variants of each inclusion vector', () => {
    for (const v of INCLUSION) {
      const [leaf, root, proof] = [b64(v.leafHash), b64(v.root), v.proof.map(b64)];
      const variants: [number, number, TreeHash, TreeHash[], TreeHash][] = [
        [v.leafIdx + 1, v.treeSize, leaf, proof, root],
        [v.leafIdx ^ 2, v.treeSize, leaf, proof, root],
        [v.leafIdx, v.treeSize * 2, leaf, proof, root],
        [v.leafIdx, Math.floor(v.treeSize / 2), leaf, proof, root],
        [v.leafIdx, v.treeSize, leaf, proof, EMPTY_ROOT],
        [v.leafIdx, v.treeSize, leafHash('not the leaf'), proof, root],
        [v.leafIdx, v.treeSize, leaf, [Buffer.alloc(32), ...proof], root],
        [v.leafIdx, v.treeSize, leaf, [...proof, Buffer.alloc(32)], root],
        [v.leafIdx, v.treeSize, leaf, [...proof, root], root],
      ];
      for (const [index, size, l, p, r] of variants) {
        expect(() => verifyInclusion(index, size, l, p, r), `${index}/${size}`).toThrow();
      }
    }
  });

  it('refuses a leaf at index == size, any leaf of the empty tree, and hashes that are not 32 bytes', () => {
    const { lookup, roots } = referenceTree();
    const proof = proofHashes(inclusionPlan(3, 8), lookup);
    const leaf = leafHash(Buffer.from(RFC6962_LEAVES[3]!, 'hex'));
    expect(() => verifyInclusion(8, 8, leaf, proof, roots[7]!)).toThrow(/beyond tree size/);
    expect(() => verifyInclusion(0, 0, leaf, [], EMPTY_ROOT)).toThrow(/beyond tree size/);
    expect(() => verifyInclusion(3, 8, leaf.subarray(0, 31), proof, roots[7]!)).toThrow(/32 bytes/);
    expect(() =>
      verifyInclusion(
        3,
        8,
        leaf,
        [...proof.slice(0, 2), Buffer.concat([proof[2]!, Buffer.alloc(1)])],
        roots[7]!,
      ),
    ).toThrow(/32 bytes/);
    expect(() => inclusionPlan(8, 8)).toThrow(RangeError);
    expect(() => inclusionPlan(0, 0)).toThrow(RangeError);
  });

  it('refuses an interior node presented as a leaf (the 0x00/0x01 prefixes keep them apart)', () => {
    const { lookup, roots } = referenceTree();
    // Node (1, 1) covers leaves 2 and 3; its children's hashes, concatenated, as a leaf's input.
    const left = lookup({ level: 0, index: 2 })!;
    const right = lookup({ level: 0, index: 3 })!;
    const proofOfNode = proofHashes(inclusionPlan(1, 4), (node) =>
      lookup({ level: node.level + 1, index: node.index }),
    );
    // The node itself, walked up its own path, does reach the root: that is the tree's math...
    expect(rootFromInclusionProof(1, 4, nodeHash(left, right), proofOfNode).equals(roots[7]!)).toBe(true);
    // ...but no leaf input hashes to it, so presenting the node's bytes as an entry fails.
    expect(() =>
      verifyInclusion(1, 4, leafHash(Buffer.concat([left, right])), proofOfNode, roots[7]!),
    ).toThrow();
  });

  it('refuses the consistency vectors swapped, with wrong roots, truncated or padded', () => {
    for (const v of CONSISTENCY.filter((c) => c.size1 < c.size2)) {
      const [r1, r2, proof] = [b64(v.root1), b64(v.root2), v.proof.map(b64)];
      expect(() => verifyConsistency(v.size1, v.size2, proof, r2, r1)).toThrow();
      expect(() => verifyConsistency(v.size1, v.size2, proof.slice(1), r1, r2)).toThrow();
      expect(() => verifyConsistency(v.size1, v.size2, [...proof, r2], r1, r2)).toThrow();
      expect(() => verifyConsistency(v.size1, v.size2, [r1, ...proof], r1, r2)).toThrow();
      expect(() => verifyConsistency(v.size1, v.size2, [], r1, r2)).toThrow(/empty/);
      expect(() => verifyConsistency(v.size2, v.size1, proof, r2, r1)).toThrow(/smaller/);
    }
    const same = b64(CONSISTENCY[0]!.root1);
    expect(() => verifyConsistency(1, 1, [same], same, same)).toThrow(/must be empty/);
    expect(() => verifyConsistency(1, 1, [], same, EMPTY_ROOT)).toThrow(/different roots/);
    expect(() => verifyConsistency(0, 8, [], EMPTY_ROOT, b64(CONSISTENCY[1]!.root2))).not.toThrow();
    expect(() => verifyConsistency(0, 8, [same], EMPTY_ROOT, b64(CONSISTENCY[1]!.root2))).toThrow(
      /must be empty/,
    );
  });
});

describe('the Merkle tree beyond 2^32 leaves (no 32-bit bit operators)', () => {
  // A tree whose leaves are all A except leaf `target`, which is B: every stored node is
  // computable without building the tree, and left and right differ along B's path.
  function sparseTree(target: number) {
    const uniform: TreeHash[] = [leafHash('A')];
    const onPath: TreeHash[] = [leafHash('B')];
    for (let level = 1; level < 60; level++) {
      uniform.push(nodeHash(uniform[level - 1]!, uniform[level - 1]!));
      const childIndex = Math.floor(target / 2 ** (level - 1));
      onPath.push(
        childIndex % 2 === 1
          ? nodeHash(uniform[level - 1]!, onPath[level - 1]!)
          : nodeHash(onPath[level - 1]!, uniform[level - 1]!),
      );
    }
    const lookup = (node: NodeId) =>
      node.index === Math.floor(target / 2 ** node.level) ? onPath[node.level] : uniform[node.level];
    const root = (size: number) => foldSubtrees(perfectSubtrees(0, size).map((n) => lookup(n)!));
    return { lookup, root };
  }

  it.each([
    [2 ** 32 + 5, 2 ** 32 + 11],
    [2 ** 32 - 1, 2 ** 32 + 1],
    [2 ** 40 + 2 ** 33 + 7, 2 ** 41 + 3],
    [2 ** 52 + 1, 2 ** 53 - 1],
  ])('proves leaf %d in a tree of %d leaves, and not at its neighbours', (target, size) => {
    const tree = sparseTree(target);
    const proof = proofHashes(inclusionPlan(target, size), tree.lookup);
    const root = tree.root(size);
    expect(() => verifyInclusion(target, size, leafHash('B'), proof, root)).not.toThrow();
    expect(() => verifyInclusion(target, size, leafHash('A'), proof, root)).toThrow();
    expect(() => verifyInclusion(target - 1, size, leafHash('B'), proof, root)).toThrow();
    expect(() => verifyInclusion(target + 1, size, leafHash('B'), proof, root)).toThrow();
    expect(() => verifyInclusion(target % 2 ** 32, size % 2 ** 32, leafHash('B'), proof, root)).toThrow();
  });

  it('proves consistency between sizes beyond 2^32', () => {
    const tree = sparseTree(2 ** 33 + 3);
    for (const [from, to] of [
      [2 ** 32 + 1, 2 ** 33 + 5],
      [2 ** 33 + 4, 2 ** 34],
      [2 ** 32, 2 ** 45 + 17],
    ] as const) {
      const proof = proofHashes(consistencyPlan(from, to), tree.lookup);
      expect(() => verifyConsistency(from, to, proof, tree.root(from), tree.root(to))).not.toThrow();
      expect(() => verifyConsistency(from + 1, to, proof, tree.root(from), tree.root(to))).toThrow();
    }
  });
});
