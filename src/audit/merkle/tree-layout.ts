import type { NodeId } from './tree-shape.js';

/**
 * Where a node sits when nodes are stored in the order appends complete them: leaf i
 * completes its own node and one node per trailing one-bit of i, so the first i leaves
 * complete 2i - popcount(i) nodes. A tree of n leaves is then one run of records,
 * appended at the end and truncated to a leaf boundary, with no index beside it.
 */
export function nodesStoredFor(leaves: number): number {
  return 2 * leaves - popcount(leaves);
}

/** The record position of a node in that order. */
export function storedPosition(node: NodeId): number {
  const completingLeaf = (node.index + 1) * 2 ** node.level - 1;
  return nodesStoredFor(completingLeaf) + node.level;
}

/** Set bits of a safe integer, without 32-bit operators. */
export function popcount(n: number): number {
  let bits = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) bits += rest % 2;
  return bits;
}

/** How many whole leaves a run of `records` stored nodes holds (the rest is a torn tail). */
export function leavesStoredIn(records: number): number {
  // nodesStoredFor grows by at least one per leaf: search the largest n with nodesStoredFor(n) <= records.
  let low = 0;
  let high = records;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (nodesStoredFor(mid) <= records) low = mid;
    else high = mid - 1;
  }
  return low;
}
