import { EQUALITY_FILTERS, type EqualityFilter } from '../query-match.js';

/** Default key prefix; the braces are a Redis Cluster hash tag so every key of the log shares one slot. */
export const DEFAULT_KEY_PREFIX = 'arbiter:{audit}';

/** Tree records per Redis string: 2 MiB each, far below Redis's 512 MB limit on a string. */
export const TREE_CHUNK_RECORDS = 65536;

/** Query filters kept as Redis indexes (sorted sets of seq): all equality filters (query-match.ts). */
export const INDEXED_FIELDS = EQUALITY_FILTERS;
export type IndexedField = EqualityFilter;

/** Index keys kept per field; past this many values (say, actors), they start over. */
const KEPT_INDEX_KEYS = 10_000;

/**
 * The Redis key layout of one audit chain. Every key the scripts touch is named here
 * and passed to them in KEYS, so the layout is also valid on a Redis Cluster.
 */
export class RedisAuditKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Stream of entries; the stream id of entry seq is `<seq>-0`, the entry is JSON in field `entry`. */
  get stream(): string {
    return `${this.prefix}:stream`;
  }

  /** Hash {seq, hash, id}: the chain head that the append script compares and moves. */
  get head(): string {
    return `${this.prefix}:head`;
  }

  /** Hash entry id -> seq. */
  get ids(): string {
    return `${this.prefix}:ids`;
  }

  /** Sorted set member seq, score = timestamp in epoch ms. */
  get time(): string {
    return `${this.prefix}:idx:time`;
  }

  /**
   * Prefix-maximum records: the entries whose timestamp exceeds every earlier one (score
   * = timestamp). The first one at or after `since` is the lowest seq a range can match.
   */
  get timeFloor(): string {
    return `${this.prefix}:idx:time-floor`;
  }

  /**
   * Suffix-minimum records: the entries whose timestamp is below every later one (score
   * = timestamp). The last one at or before `until` is the highest seq a range can match.
   */
  get timeCeiling(): string {
    return `${this.prefix}:idx:time-ceiling`;
  }

  /** Scratch sorted set a query script builds and deletes within one atomic run. */
  get scratch(): string {
    return `${this.prefix}:scratch`;
  }

  /** Sorted set member seq, score seq, of the entries whose `field` equals `value`. */
  index(field: IndexedField, value: string): string {
    if (field === 'decision_id') return `${this.prefix}:idx:${field}:${value}`;
    // Every entry names keys for the same few actors, capabilities, outcomes and event
    // types: kept, they are not built again for each one. (Decision ids never recur.)
    const named = this.indexKeys[field];
    let key = named.get(value);
    if (key === undefined) {
      key = `${this.prefix}:idx:${field}:${value}`;
      if (named.size >= KEPT_INDEX_KEYS) named.clear();
      named.set(value, key);
    }
    return key;
  }

  /** Index key names kept for reuse, over all fields: at most KEPT_INDEX_KEYS per field. */
  get keptIndexKeys(): number {
    return Object.values(this.indexKeys).reduce((n, named) => n + named.size, 0);
  }

  private readonly indexKeys: Record<Exclude<IndexedField, 'decision_id'>, Map<string, string>> = {
    actor_id: new Map(),
    capability: new Map(),
    outcome: new Map(),
    event_type: new Map(),
    namespace: new Map(),
  };

  /**
   * Set once the namespace indexes hold every entry: a log written before they existed
   * gets them built from its actor indexes when it is opened (namespace-indexes.ts).
   */
  get namespaceIndexesBuilt(): string {
    return `${this.prefix}:idx:namespace-built`;
  }

  /**
   * The Merkle tree's nodes, 32-byte records in append order (merkle/tree-layout.ts), in
   * strings of TREE_CHUNK_RECORDS records each: record p is in chunk floor(p / size).
   */
  treeChunk(chunk: number): string {
    return `${this.prefix}:tree:${chunk}`;
  }

  /** The chunk key and byte offset of tree record `position`. */
  treeRecord(position: number): { key: string; offset: number } {
    const chunk = Math.floor(position / TREE_CHUNK_RECORDS);
    return { key: this.treeChunk(chunk), offset: (position - chunk * TREE_CHUNK_RECORDS) * 32 };
  }

  /** Tombstone of a batch whose append timed out: the script refuses to store it later. */
  cancelled(batchId: string): string {
    return `${this.prefix}:cancelled:${batchId}`;
  }
}

/** Stream id of the entry at seq: the stream is keyed by seq so a range of seqs is one XRANGE. */
export function streamId(seq: number): string {
  return `${seq}-0`;
}
