import type { TreeNodeStore } from '../audit-tree.js';
import {
  appendLeaves,
  EMPTY_FRONTIER,
  frontierNodes,
  frontierRoot,
  type TreeFrontier,
} from '../merkle/tree-frontier.js';
import { HASH_BYTES, type TreeHash } from '../merkle/tree-hash.js';
import { leavesStoredIn, nodesStoredFor, storedPosition } from '../merkle/tree-layout.js';
import { type NodeId, nodeKey } from '../merkle/tree-shape.js';
import type { LogFile } from './log-file.js';

export const TREE_FILE = 'audit.tree';

/** Nodes within this many records (64 KiB) of each other are read in one go. */
const SPAN_RECORDS = 2048;

/**
 * Nodes over at least 2^11 leaves are kept in memory once read (about 70 bytes per 1,000
 * leaves): a proof then reads only the few records near its leaf, in one or two spans,
 * instead of one read per upper level. A stored node never changes, so the copy never
 * goes stale; only a truncation drops some.
 */
const CACHED_LEVEL = 11;

/**
 * The Merkle tree of the file audit log, beside it: every completed perfect subtree's
 * hash as a 32-byte record, in the order appends complete them (tree-layout.ts). The
 * newest leaves' nodes and the frontier live in memory too, so an append writes only
 * new records and a proof reads about log2(n) of them.
 */
export class TreeFile implements TreeNodeStore {
  private count = 0;
  private frontier: TreeFrontier = EMPTY_FRONTIER;
  /** Upper nodes read so far, by stored position. */
  private readonly upper = new Map<number, TreeHash>();

  private constructor(private readonly file: LogFile) {}

  /** Opens the tree file, dropping a torn tail (records of a leaf not wholly written). */
  static async open(file: LogFile): Promise<TreeFile> {
    const tree = new TreeFile(file);
    await tree.truncateTo(await tree.storedLeaves());
    return tree;
  }

  /** Leaves whose records (the leaf and the nodes it completes) are wholly in the file. */
  private async storedLeaves(): Promise<number> {
    return leavesStoredIn(Math.floor((await this.file.size()) / HASH_BYTES));
  }

  /** Leaves stored. */
  get size(): number {
    return this.count;
  }

  leaves(): Promise<number> {
    return Promise.resolve(this.count);
  }

  /** Root of the whole stored tree (from the frontier in memory). */
  get root(): TreeHash {
    return frontierRoot(this.frontier);
  }

  /**
   * Cuts the tree back to its first `leaves` leaves (never grows it). The tree in memory
   * is cut first: should the file refuse to shrink, the records past the end are never
   * read, and the next append overwrites them.
   */
  async truncateTo(leaves: number): Promise<void> {
    const kept = Math.min(leaves, await this.storedLeaves());
    const nodes = frontierNodes(kept);
    const hashes = await this.readNodesWithin(nodes, nodesStoredFor(kept));
    this.count = kept;
    for (const position of this.upper.keys()) {
      if (position >= nodesStoredFor(kept)) this.upper.delete(position);
    }
    this.frontier = { size: kept, hashes: nodes.map((node) => hashes.get(nodeKey(node))!) };
    await this.file.truncate(nodesStoredFor(kept) * HASH_BYTES);
  }

  /** Hashes leaves in and writes the nodes they complete after the stored ones; durable after sync(). */
  async append(leafHashes: readonly TreeHash[]): Promise<void> {
    const { frontier, records } = appendLeaves(this.frontier, leafHashes);
    // Nothing changes in memory unless the write succeeds; a failed write's bytes are
    // overwritten by the next append at the same position.
    await this.file.write(Buffer.concat(records), nodesStoredFor(this.count) * HASH_BYTES);
    this.frontier = frontier;
    this.count = frontier.size;
  }

  sync(): Promise<void> {
    return this.file.sync();
  }

  /**
   * Reads the stored nodes among these, close ones together: the nodes near a leaf sit
   * within a few KB of each other (append order), so a proof takes a handful of reads,
   * not one per hash.
   */
  readNodes(nodes: readonly NodeId[]): Promise<Map<string, TreeHash>> {
    return this.readNodesWithin(nodes, nodesStoredFor(this.count));
  }

  /** `stored`: records of the tree's leaves; anything past them is not part of the tree. */
  private async readNodesWithin(nodes: readonly NodeId[], stored: number): Promise<Map<string, TreeHash>> {
    const found = new Map<string, TreeHash>();
    const wanted: { node: NodeId; position: number }[] = [];
    for (const node of nodes) {
      const position = storedPosition(node);
      if (position >= stored) continue;
      const cached = this.upper.get(position);
      if (cached) found.set(nodeKey(node), cached);
      else wanted.push({ node, position });
    }
    wanted.sort((a, b) => a.position - b.position);
    const spans: { first: number; last: number; members: typeof wanted }[] = [];
    for (const w of wanted) {
      const span = spans.at(-1);
      if (span && w.position - span.first < SPAN_RECORDS) {
        span.last = w.position;
        span.members.push(w);
      } else {
        spans.push({ first: w.position, last: w.position, members: [w] });
      }
    }
    await Promise.all(
      spans.map(async ({ first, last, members }) => {
        const bytes = await this.file.read((last - first + 1) * HASH_BYTES, first * HASH_BYTES);
        for (const { node, position } of members) {
          const record = bytes.subarray((position - first) * HASH_BYTES, (position - first + 1) * HASH_BYTES);
          if (record.length !== HASH_BYTES) continue;
          const hash = Buffer.from(record);
          found.set(nodeKey(node), hash);
          if (node.level >= CACHED_LEVEL) this.upper.set(position, hash);
        }
      }),
    );
    return found;
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
