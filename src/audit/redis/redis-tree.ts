import type { Redis } from 'ioredis';
import type { TreeNodeStore } from '../audit-tree.js';
import { appendLeaves, frontierNodes, type TreeFrontier } from '../merkle/tree-frontier.js';
import { HASH_BYTES, type TreeHash } from '../merkle/tree-hash.js';
import { nodesStoredFor, storedPosition } from '../merkle/tree-layout.js';
import { type NodeId, nodeKey } from '../merkle/tree-shape.js';
import type { RedisAuditKeys } from './redis-keys.js';

/** The tree records a batch adds, where they go, and the frontier after it. */
export interface TreeGrowth {
  records: Buffer;
  firstPosition: number;
  firstKey: string;
  lastKey: string;
  frontier: TreeFrontier;
}

/** The frontier as the head hash keeps it: base64 of its hashes, left to right. */
export function encodeFrontier(frontier: TreeFrontier): string {
  return Buffer.concat(frontier.hashes).toString('base64');
}

/** The frontier of a tree of `size` leaves from its encoding; undefined if it is not one. */
export function decodeFrontier(size: number, encoded: string): TreeFrontier | undefined {
  const bytes = Buffer.from(encoded, 'base64');
  const count = frontierNodes(size).length;
  if (bytes.length !== count * HASH_BYTES || bytes.toString('base64') !== encoded) return undefined;
  const hashes = Array.from({ length: count }, (_, i) =>
    bytes.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES),
  );
  return { size, hashes };
}

/** Hashes leaves into the tree whose frontier is known: the records to store and the new frontier. */
export function growTree(
  keys: RedisAuditKeys,
  frontier: TreeFrontier,
  leaves: readonly TreeHash[],
): TreeGrowth {
  const firstPosition = nodesStoredFor(frontier.size);
  const { frontier: next, records } = appendLeaves(frontier, leaves);
  const lastPosition = firstPosition + Math.max(records.length, 1) - 1;
  return {
    records: Buffer.concat(records),
    firstPosition,
    firstKey: keys.treeRecord(firstPosition).key,
    lastKey: keys.treeRecord(lastPosition).key,
    frontier: next,
  };
}

/** The Redis log's tree: its size is the head's `tree` field, its nodes the chunked records. */
export class RedisTreeStore implements TreeNodeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisAuditKeys,
  ) {}

  async leaves(): Promise<number> {
    return Number((await this.redis.hget(this.keys.head, 'tree')) ?? 0);
  }

  async readNodes(nodes: readonly NodeId[]): Promise<Map<string, TreeHash>> {
    const pipeline = this.redis.pipeline();
    for (const node of nodes) {
      const { key, offset } = this.keys.treeRecord(storedPosition(node));
      pipeline.getrangeBuffer(key, offset, offset + HASH_BYTES - 1);
    }
    // Stryker disable next-line ArrayDeclaration: a pipeline (not a MULTI) never resolves null.
    const replies = (await pipeline.exec()) ?? [];
    const found = new Map<string, TreeHash>();
    replies.forEach(([err, value], i) => {
      if (err) throw err;
      const record = value as Buffer;
      // A record never written reads short or, inside a chunk, as zeros only where a later one was set.
      if (record.length === HASH_BYTES) found.set(nodeKey(nodes[i]!), record);
    });
    return found;
  }

  /** The frontier of the tree at `size` leaves, when the tree holds exactly that many. */
  async frontier(size: number): Promise<TreeFrontier | undefined> {
    if ((await this.leaves()) !== size) return undefined;
    const nodes = frontierNodes(size);
    const hashes = await this.readNodes(nodes);
    if (hashes.size !== new Set(nodes.map(nodeKey)).size) return undefined;
    return { size, hashes: nodes.map((node) => hashes.get(nodeKey(node))!) };
  }
}
