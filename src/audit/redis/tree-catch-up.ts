import type { Redis } from 'ioredis';
import type { AuditEntry, ChainHead } from '../audit-log.js';
import type { AuditLogger } from '../audit-logger.js';
import { hashEntry, entryLeafHash } from '../chain.js';
import { TREE_CATCH_UP_SCRIPT } from './append-scripts.js';
import { storedEntry } from './entry-codec.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';
import { encodeFrontier, growTree, RedisTreeStore } from './redis-tree.js';
import { ANCHOR_FIELD, rangeOf } from './retention.js';
import { LuaScript } from '../../redis/lua-script.js';

const CATCH_UP = new LuaScript(TREE_CATCH_UP_SCRIPT);
const CHUNK_LEAVES = 1000;

/**
 * Hashes the entries the tree lacks into it, oldest first, until it holds the head: a
 * log older than the tree, or batches stored while a writer did not know the frontier.
 * Each step stores its records only if the tree still holds what this step read, so
 * replicas catching up at once never store a record twice. An item that holds no entry,
 * or an entry whose hash or link does not hold, is never hashed in: the catch-up stops
 * there and says so.
 */
export async function catchUpRedisTree(
  redis: Redis,
  keys: RedisAuditKeys,
  logger: AuditLogger,
): Promise<void> {
  const store = new RedisTreeStore(redis, keys);
  let unreadable: number | undefined;
  for (;;) {
    const [treeText, seqText, anchorText] = await redis.hmget(keys.head, 'tree', 'seq', ANCHOR_FIELD);
    const [tree, seq] = [Number(treeText ?? 0), Number(seqText ?? 0)];
    if (tree >= seq) return;
    const frontier = await store.frontier(tree);
    if (frontier === undefined) {
      // Moved since the read: look again; the same size twice means its records are gone.
      if (unreadable === tree) {
        logger.error({ tree }, 'audit tree records are missing; the tree cannot grow until it is rebuilt');
        return;
      }
      unreadable = tree;
      continue;
    }
    const to = Math.min(seq, tree + CHUNK_LEAVES);
    // From the entry before: each new leaf must link to the one before it.
    const items = await redis.xrange(keys.stream, streamId(Math.max(tree, 1)), streamId(to));
    const read = leadingEntries(items);
    const previous = leafBefore(read, tree, anchorText);
    const sound = read.slice(0, soundEntries(read, tree, previous));
    if (sound.length > 0) {
      const growth = growTree(keys, frontier, sound.map(entryLeafHash));
      await CATCH_UP.run(
        redis,
        [keys.head, growth.firstKey, growth.lastKey],
        [tree, tree + sound.length, growth.records, growth.firstPosition, encodeFrontier(growth.frontier)],
      );
    }
    if (sound.length < to - tree) {
      logger.error(
        { seq: tree + sound.length + 1 },
        'audit tree catch-up stops: the entry at this seq is missing or does not hash to its own hash',
      );
      return;
    }
  }
}

/**
 * The leaf before the new ones: the entry at `tree` (taken off `read`), or the retention
 * anchor once that entry is archived; undefined for an empty tree or a missing entry.
 */
function leafBefore(
  read: AuditEntry[],
  tree: number,
  anchorText: string | null | undefined,
): ChainHead | undefined {
  if (read[0]?.seq === tree) return read.shift();
  const anchor = rangeOf(anchorText).anchor;
  return anchor?.seq === tree ? anchor : undefined;
}

/** How many leading entries are seq tree+1, tree+2, ..., each hashing to its hash and linked to the one before. */
function soundEntries(entries: readonly AuditEntry[], tree: number, previous: ChainHead | undefined): number {
  if (tree > 0 && previous === undefined) return 0;
  let linkTo = previous?.hash;
  for (const [i, entry] of entries.entries()) {
    const linked = linkTo === undefined || entry.previous_hash === linkTo;
    if (entry.seq !== tree + 1 + i || hashEntry(entry) !== entry.hash || !linked) return i;
    linkTo = entry.hash;
  }
  return entries.length;
}

/** The entries stream items hold, up to the first item that holds none (a tampered stream). */
function leadingEntries(items: readonly [id: string, fields: string[]][]): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (const [, fields] of items) {
    const entry = storedEntry(fields);
    if (!entry) break;
    entries.push(entry);
  }
  return entries;
}
