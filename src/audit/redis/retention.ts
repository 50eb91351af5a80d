import type { Redis } from 'ioredis';
import type { AuditEntry, RetainedRange, RetentionAnchor } from '../audit-log.js';
import type { AuditLogger } from '../audit-logger.js';
import {
  checkAnchorEntry,
  checkAnchorFollows,
  checkAnchorShape,
  movesBack,
  treeBehind,
} from '../retention-refusals.js';
import { indexKeysOf, storedEntry } from './entry-codec.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';
import { readEntries } from './stream-reader.js';
import { LuaScript } from '../../redis/lua-script.js';

/**
 * Head hash fields of the retained range: `anchor` (the RetentionAnchor as JSON) and
 * `from` (the first retained seq, anchor seq + 1). Every read honours `from` at once,
 * even while the archived entries are still being removed.
 */
export const ANCHOR_FIELD = 'anchor';
export const FROM_FIELD = 'from';

/** Entries removed per step of a trim. */
export const TRIM_BATCH_ENTRIES = 1000;

/**
 * Moves the retained range forward, never back, atomically: two trims at once cannot
 * leave the older anchor recorded. The caller has checked the entry at the anchor.
 *
 * KEYS: 1 head. ARGV: 1 anchor seq, 2 anchor hash, 3 anchor JSON, 4 '1' to require the
 * Merkle tree to hold the anchor's leaf.
 * Reply: {'recorded'} | {'same'} | {'behind', recorded anchor seq}
 *        | {'forked', recorded anchor hash} | {'tree', leaves in the tree}.
 */
export const RECORD_ANCHOR_SCRIPT = `
local stored = redis.call('HMGET', KEYS[1], '${FROM_FIELD}', '${ANCHOR_FIELD}', 'tree')
local from = tonumber(stored[1] or '1')
local seq = tonumber(ARGV[1])
if seq + 1 < from then return {'behind', string.format('%d', from - 1)} end
if seq + 1 == from then
  local hash = cjson.decode(stored[2]).hash
  if hash == ARGV[2] then return {'same'} end
  return {'forked', hash}
end
local tree = tonumber(stored[3] or '0')
if ARGV[4] == '1' and tree < seq then return {'tree', string.format('%d', tree)} end
redis.call('HSET', KEYS[1], '${ANCHOR_FIELD}', ARGV[3], '${FROM_FIELD}', string.format('%d', seq + 1))
return {'recorded'}
`;

const RECORD_ANCHOR = new LuaScript(RECORD_ANCHOR_SCRIPT);

/** The range the head hash records: from seq 1 until something was archived. */
export function rangeOf(anchorText: string | null | undefined): RetainedRange {
  if (!anchorText) return { from_seq: 1, anchor: null };
  const anchor = JSON.parse(anchorText) as RetentionAnchor;
  return { from_seq: anchor.seq + 1, anchor };
}

export async function readRetained(redis: Redis, keys: RedisAuditKeys): Promise<RetainedRange> {
  return rangeOf(await redis.hget(keys.head, ANCHOR_FIELD));
}

/** How a trim runs: batch size, and whether the Merkle tree must hold the anchor (not for a log without one). */
export interface TrimOptions {
  batchEntries: number;
  requireTree: boolean;
  logger: AuditLogger;
}

/**
 * Makes `anchor` the start of the retained log (see AuditLog.trim), then removes the
 * archived entries. Called again with the recorded anchor, it only finishes the removal.
 */
export async function trimTo(
  redis: Redis,
  keys: RedisAuditKeys,
  anchor: RetentionAnchor,
  options: TrimOptions,
): Promise<void> {
  await recordAnchor(redis, keys, anchor, options);
  await removeArchived(redis, keys, anchor.seq, options.batchEntries);
}

/**
 * Records `anchor` in the head hash, after checking it; from then on every read starts
 * after it. Nothing to do when it is the recorded anchor already.
 */
export async function recordAnchor(
  redis: Redis,
  keys: RedisAuditKeys,
  anchor: RetentionAnchor,
  options: Omit<TrimOptions, 'batchEntries'>,
): Promise<void> {
  checkAnchorShape(anchor);
  const current = (await readRetained(redis, keys)).anchor;
  checkAnchorFollows(anchor, current);
  if (current?.seq === anchor.seq) return; // the recorded anchor itself
  const [entry] = await readEntries(redis, keys, [anchor.seq]);
  checkAnchorEntry(anchor, entry);
  const [status, detail] = (await RECORD_ANCHOR.run(
    redis,
    [keys.head],
    [anchor.seq, anchor.hash, JSON.stringify(anchor), options.requireTree ? '1' : '0'],
  )) as [string, string | undefined];
  checkRecorded(anchor, status, detail);
  if (status === 'recorded') {
    options.logger.info(
      { anchor_seq: anchor.seq, archive: anchor.archive, retained_from: anchor.seq + 1 },
      'audit retention anchor recorded; removing the archived entries from Redis',
    );
  }
}

/** Throws for a reply of the record script that recorded nothing: not ok, or another trim moved the anchor in between. */
function checkRecorded(anchor: RetentionAnchor, status: string, detail: string | undefined): void {
  if (status === 'tree') throw treeBehind(anchor);
  if (status === 'behind') throw movesBack(anchor, Number(detail));
  if (status === 'forked') throw movesBack(anchor, anchor.seq);
}

/** Removes every stored entry up to seq `upTo`, batch after batch; safe to run twice or at once. */
export async function removeArchived(
  redis: Redis,
  keys: RedisAuditKeys,
  upTo: number,
  batchEntries: number = TRIM_BATCH_ENTRIES,
  stopped: () => boolean = () => false,
): Promise<void> {
  while (!stopped() && (await removeArchivedBatch(redis, keys, upTo, batchEntries)) > 0);
}

/**
 * Removes the oldest stored entries up to seq `upTo` (at most `count`) with their index
 * data, in one MULTI: the stream items go last, so until it runs the batch is still
 * readable and a rerun finds it again. So at any time the entries before the stream's
 * first item are gone everywhere and those from it on are fully indexed (the query
 * script relies on this for the time index). Returns how many entries it removed.
 *
 * The time floor record of the highest seq up to the anchor stays: a query whose `since`
 * is at or below its timestamp finds it and starts at `from`; without it, that query
 * would start at a later record and skip retained entries older than it.
 * Merkle tree records stay too: proofs of retained entries need them.
 */
export async function removeArchivedBatch(
  redis: Redis,
  keys: RedisAuditKeys,
  upTo: number,
  count: number,
): Promise<number> {
  const items = await redis.xrange(keys.stream, '-', streamId(upTo), 'COUNT', count);
  if (items.length === 0) return 0;
  const seqs = items.map(([id]) => id.split('-')[0] as string);
  const entries: AuditEntry[] = [];
  for (const [, fields] of items) {
    const entry = storedEntry(fields);
    // An item that is not an entry has no ids or index keys to remove; the stream item still goes.
    if (entry) entries.push(entry);
  }
  const floorScores = await redis.zmscore(keys.timeFloor, ...seqs);
  const indexKeys = new Set(entries.flatMap((entry) => indexKeysOf(keys, entry)));
  const removal = redis.multi();
  if (entries.length > 0) removal.hdel(keys.ids, ...entries.map((e) => e.id));
  removal.zrem(keys.time, ...seqs);
  removal.zrem(keys.timeCeiling, ...seqs);
  // Floor records rise in seq and timestamp together: those below the batch's highest are
  // older records, all archived. The batch's highest stays until a later batch has one.
  const topFloor = floorScores.filter((score) => score !== null).at(-1);
  if (topFloor !== undefined) removal.zremrangebyscore(keys.timeFloor, '-inf', `(${topFloor}`);
  // Stryker disable next-line StringLiteral: Redis reads '' as 0, below every seq as -inf is.
  for (const key of indexKeys) removal.zremrangebyscore(key, '-inf', upTo);
  removal.xtrim(keys.stream, 'MINID', streamId(Number(seqs.at(-1)) + 1));
  // Stryker disable next-line ArrayDeclaration: exec answers null only for a WATCHed key that changed; none is.
  const results = (await removal.exec()) ?? [];
  for (const [err] of results) if (err) throw err;
  return items.length;
}
