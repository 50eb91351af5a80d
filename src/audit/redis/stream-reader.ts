import type { Redis } from 'ioredis';
import type { AuditEntry } from '../audit-log.js';
import { entryField, storedEntry } from './entry-codec.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';

/** One stream item: its stream id and the stored entry text (undefined when the item has none). */
export interface StreamItem {
  streamId: string;
  text: string | undefined;
}

/**
 * Reads the stream from `fromSeq` to `toSeq` (inclusive; undefined = the end) in chunks
 * of XRANGE COUNT, so memory stays bounded whatever the log length. visit returns false to stop.
 */
export async function scanStream(
  redis: Redis,
  keys: RedisAuditKeys,
  range: { fromSeq: number; toSeq?: number; chunkEntries: number },
  visit: (item: StreamItem) => boolean,
): Promise<void> {
  let start = streamId(range.fromSeq);
  const end = range.toSeq === undefined ? '+' : streamId(range.toSeq);
  for (;;) {
    const items = await redis.xrange(keys.stream, start, end, 'COUNT', range.chunkEntries);
    for (const [id, fields] of items) {
      if (!visit({ streamId: id, text: entryField(fields) })) return;
    }
    const last = items[items.length - 1];
    // Stryker disable next-line ConditionalExpression: a short chunk ends the range; reading on costs only an empty XRANGE.
    if (!last || items.length < range.chunkEntries) return;
    start = `(${last[0]}`;
  }
}

/** Entries at the given seqs, in that order; missing ones are left out. */
export async function readEntries(
  redis: Redis,
  keys: RedisAuditKeys,
  seqs: readonly number[],
): Promise<AuditEntry[]> {
  const pipeline = redis.pipeline();
  for (const seq of seqs) pipeline.xrange(keys.stream, streamId(seq), streamId(seq));
  // Stryker disable next-line ArrayDeclaration: a pipeline (not a MULTI) never resolves null.
  const results = (await pipeline.exec()) ?? [];
  const entries: AuditEntry[] = [];
  for (const [err, items] of results) {
    if (err) throw err;
    const item = (items as [string, string[]][])[0];
    const entry = item && storedEntry(item[1]);
    if (entry) entries.push(entry);
  }
  return entries;
}
