import { foldSubtrees, planNodes, proofHashes } from './merkle/proof-hashes.js';
import { consistencyPlan, inclusionPlan } from './merkle/proof-plan.js';
import { EMPTY_ROOT, type TreeHash } from './merkle/tree-hash.js';
import { type NodeId, nodeKey, perfectSubtrees } from './merkle/tree-shape.js';

/**
 * The RFC 6962 Merkle tree over the audit log (leaf index = seq - 1), as its backend
 * stores it: roots and proofs are read from stored nodes, never by re-hashing entries.
 */
export interface AuditTree {
  /** Leaves the tree holds: the entries hashed in so far. */
  size(): Promise<number>;
  root(size: number): Promise<TreeHash>;
  inclusionProof(leafIndex: number, size: number): Promise<TreeHash[]>;
  consistencyProof(fromSize: number, toSize: number): Promise<TreeHash[]>;
}

/** Reads stored perfect-subtree hashes in one batch; a backend's narrow side of the tree. */
export interface TreeNodeStore {
  leaves(): Promise<number>;
  readNodes(nodes: readonly NodeId[]): Promise<Map<string, TreeHash>>;
}

export class TreeBeyondSizeError extends Error {
  readonly code = 'tree_size_unavailable';
}

/** Roots and proofs from any node store: plan, fetch once, fold. */
export class StoredAuditTree implements AuditTree {
  constructor(private readonly store: TreeNodeStore) {}

  size(): Promise<number> {
    return this.store.leaves();
  }

  async root(size: number): Promise<TreeHash> {
    await this.checkSize(size);
    if (size === 0) return EMPTY_ROOT;
    const nodes = perfectSubtrees(0, size);
    const hashes = await this.store.readNodes(nodes);
    return foldSubtrees(nodes.map((node) => required(hashes, node)));
  }

  async inclusionProof(leafIndex: number, size: number): Promise<TreeHash[]> {
    await this.checkSize(size);
    return this.prove(inclusionPlan(leafIndex, size));
  }

  async consistencyProof(fromSize: number, toSize: number): Promise<TreeHash[]> {
    await this.checkSize(toSize);
    return this.prove(consistencyPlan(fromSize, toSize));
  }

  private async prove(plan: ReturnType<typeof inclusionPlan>): Promise<TreeHash[]> {
    const hashes = await this.store.readNodes(planNodes(plan));
    return proofHashes(plan, (node) => hashes.get(nodeKey(node)));
  }

  private async checkSize(size: number): Promise<void> {
    const leaves = await this.store.leaves();
    if (!Number.isSafeInteger(size) || size < 0 || size > leaves) {
      throw new TreeBeyondSizeError(`the tree holds ${leaves} leaves, not ${size}`);
    }
  }
}

function required(hashes: Map<string, TreeHash>, node: NodeId): TreeHash {
  const hash = hashes.get(nodeKey(node));
  if (hash === undefined) throw new TreeBeyondSizeError(`tree node ${nodeKey(node)} is not stored`);
  return hash;
}
