import type { ProofPlan } from './proof-plan.js';
import { nodeHash, type TreeHash } from './tree-hash.js';
import { type NodeId, nodeKey } from './tree-shape.js';

/** Reads stored perfect-subtree hashes; a backend answers from its tree state. */
export type NodeLookup = (node: NodeId) => TreeHash | undefined;

/** MTH of the leaves a list of perfect subtrees covers: folded from the right, as RFC 6962 splits. */
export function foldSubtrees(hashes: readonly TreeHash[]): TreeHash {
  if (hashes.length === 0) throw new RangeError('no subtrees to fold');
  let hash = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i]!, hash);
  return hash;
}

/** The proof's hashes from stored nodes; a missing node is an error, never a guess. */
export function proofHashes(plan: ProofPlan, lookup: NodeLookup): TreeHash[] {
  return plan.map((subtrees) =>
    foldSubtrees(
      subtrees.map((node) => {
        const hash = lookup(node);
        if (hash === undefined) throw new MissingNodeError(node);
        return hash;
      }),
    ),
  );
}

/** Every node a plan reads, once each (for a backend's batched fetch). */
export function planNodes(plan: ProofPlan): NodeId[] {
  const seen = new Map<string, NodeId>();
  for (const subtrees of plan) for (const node of subtrees) seen.set(nodeKey(node), node);
  return [...seen.values()];
}

export class MissingNodeError extends Error {
  readonly code = 'tree_node_missing';
  constructor(readonly node: NodeId) {
    super(`tree node ${nodeKey(node)} is not stored`);
  }
}
