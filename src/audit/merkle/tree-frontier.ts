import { foldSubtrees } from './proof-hashes.js';
import { EMPTY_ROOT, nodeHash, type TreeHash } from './tree-hash.js';
import { type NodeId, nodesCompletedBy, perfectSubtrees } from './tree-shape.js';

/**
 * The right edge of a tree: the roots of its perfect subtrees, largest first. It is all
 * an appender needs to hash new leaves in and to compute the root, so appending never
 * reads the log or the rest of the tree.
 */
export interface TreeFrontier {
  readonly size: number;
  readonly hashes: readonly TreeHash[];
}

export const EMPTY_FRONTIER: TreeFrontier = { size: 0, hashes: [] };

export interface StoredNode {
  readonly node: NodeId;
  readonly hash: TreeHash;
}

/** Appends one leaf: the new frontier and every perfect subtree it completes (to store). */
export function appendLeaf(
  frontier: TreeFrontier,
  leaf: TreeHash,
): { frontier: TreeFrontier; completed: StoredNode[] } {
  const completedNodes = nodesCompletedBy(frontier.size);
  const hashes = [...frontier.hashes];
  let hash = leaf;
  const completed: StoredNode[] = [{ node: completedNodes[0]!, hash }];
  for (const node of completedNodes.slice(1)) {
    hash = nodeHash(hashes.pop()!, hash);
    completed.push({ node, hash });
  }
  hashes.push(hash);
  return { frontier: { size: frontier.size + 1, hashes }, completed };
}

/** Appends leaves in order: the new frontier and the hashes of every node they complete, in stored order. */
export function appendLeaves(
  frontier: TreeFrontier,
  leaves: readonly TreeHash[],
): { frontier: TreeFrontier; records: TreeHash[] } {
  // appendLeaf's work on one copy of the frontier for the whole batch: appends run per
  // request, and a copy and a list of nodes per leaf were a kilobyte of garbage each.
  const records: TreeHash[] = [];
  const hashes = [...frontier.hashes];
  let size = frontier.size;
  for (const leaf of leaves) {
    let hash = leaf;
    records.push(hash);
    // Leaf `size` completes one more node for each trailing 1 bit of `size` (nodesCompletedBy).
    for (let rest = size; rest % 2 === 1; rest = (rest - 1) / 2) {
      hash = nodeHash(hashes.pop()!, hash);
      records.push(hash);
    }
    hashes.push(hash);
    size += 1;
  }
  return { frontier: { size, hashes }, records };
}

/** MTH of the whole tree the frontier closes. */
export function frontierRoot(frontier: TreeFrontier): TreeHash {
  return frontier.size === 0 ? EMPTY_ROOT : foldSubtrees(frontier.hashes);
}

/** The nodes a frontier of `size` leaves consists of (to rebuild it from stored nodes). */
export function frontierNodes(size: number): NodeId[] {
  return perfectSubtrees(0, size);
}
