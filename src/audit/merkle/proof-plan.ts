import { type NodeId, perfectSubtrees, splitPoint } from './tree-shape.js';

/**
 * Which stored nodes make up a proof, before any hash is read: one list of perfect
 * subtrees per proof element (RFC 6962 section 2.1.1 and 2.1.2). Planning apart from
 * reading lets a backend fetch every node of a proof in one round trip.
 */
export type ProofPlan = NodeId[][];

/** RFC 6962 PATH(m, D[0:n]): the audit path of leaf m in a tree of n leaves. */
export function inclusionPlan(leafIndex: number, treeSize: number): ProofPlan {
  if (
    !Number.isSafeInteger(treeSize) ||
    !Number.isSafeInteger(leafIndex) ||
    leafIndex < 0 ||
    leafIndex >= treeSize
  ) {
    throw new RangeError(`leaf ${leafIndex} is not in a tree of ${treeSize}`);
  }
  const plan: ProofPlan = [];
  let start = 0;
  let end = treeSize;
  // Walk down from the root; each step records the sibling subtree, nearest the root first.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (leafIndex - start < k) {
      plan.push(perfectSubtrees(start + k, end));
      end = start + k;
    } else {
      plan.push(perfectSubtrees(start, start + k));
      start += k;
    }
  }
  return plan.reverse(); // proofs list the leaf's sibling first
}

/** RFC 6962 PROOF(m, D[0:n]): the consistency proof from size m to size n. */
export function consistencyPlan(fromSize: number, toSize: number): ProofPlan {
  if (!Number.isSafeInteger(fromSize) || !Number.isSafeInteger(toSize) || fromSize < 0 || fromSize > toSize) {
    throw new RangeError(`no consistency proof from size ${fromSize} to ${toSize}`);
  }
  if (fromSize === 0 || fromSize === toSize) return [];
  const plan: ProofPlan = [];
  let m = fromSize;
  let start = 0;
  let end = toSize;
  let knownToVerifier = true; // SUBPROOF's b: the verifier has MTH(D[0:m]) already
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      plan.push(perfectSubtrees(start + k, end));
      end = start + k;
    } else {
      plan.push(perfectSubtrees(start, start + k));
      m -= k;
      start += k;
      knownToVerifier = false;
    }
  }
  if (!knownToVerifier) plan.push(perfectSubtrees(start, end));
  return plan.reverse();
}
