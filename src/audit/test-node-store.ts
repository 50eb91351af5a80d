import type { TreeNodeStore } from './audit-tree.js';
import { appendLeaf, EMPTY_FRONTIER, type TreeFrontier } from './merkle/tree-frontier.js';
import { leafHash, type TreeHash } from './merkle/tree-hash.js';
import { type NodeId, nodeKey } from './merkle/tree-shape.js';

/**
 * A tree's nodes in a Map, hashed in by the appender's own code (tree-frontier.ts): the
 * backend side of StoredAuditTree for its unit tests and the signer's (not part of the
 * public surface).
 */
export class MemoryNodeStore implements TreeNodeStore {
  private frontier: TreeFrontier = EMPTY_FRONTIER;
  private readonly nodes = new Map<string, TreeHash>();
  /** When set, reads fail with it, as a backend whose storage went away. */
  failure: Error | undefined;

  /** Hashes the leaf inputs in, in order. */
  append(inputs: readonly Uint8Array[]): this {
    for (const input of inputs) {
      const { frontier, completed } = appendLeaf(this.frontier, leafHash(input));
      this.frontier = frontier;
      for (const { node, hash } of completed) this.nodes.set(nodeKey(node), hash);
    }
    return this;
  }

  /** Forgets one stored node, as a backend whose nodes lag behind its leaf count. */
  lose(node: NodeId): void {
    this.nodes.delete(nodeKey(node));
  }

  leaves(): Promise<number> {
    return Promise.resolve(this.frontier.size);
  }

  readNodes(nodes: readonly NodeId[]): Promise<Map<string, TreeHash>> {
    if (this.failure) return Promise.reject(this.failure);
    const found = new Map<string, TreeHash>();
    for (const node of nodes) {
      const hash = this.nodes.get(nodeKey(node));
      if (hash) found.set(nodeKey(node), hash);
    }
    return Promise.resolve(found);
  }
}
