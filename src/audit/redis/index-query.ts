import type { Redis } from 'ioredis';
import { ArbiterError } from '../../model/index.js';
import type { AuditEntry, AuditPage, AuditQuery } from '../audit-log.js';
import { decodeEntry } from './entry-codec.js';
import type { AuditLogger } from '../audit-logger.js';
import { QUERY_SCRIPT } from './query-script.js';
import { INDEXED_FIELDS, type RedisAuditKeys } from './redis-keys.js';
import { LuaScript } from '../../redis/lua-script.js';

const QUERY = new LuaScript(QUERY_SCRIPT);

/** One page of a query, from the Redis indexes in one atomic script run. */
export async function queryIndexes(
  redis: Redis,
  keys: RedisAuditKeys,
  query: AuditQuery,
  logger: AuditLogger,
): Promise<AuditPage> {
  if (!Number.isSafeInteger(query.limit) || query.limit < 1) {
    throw new ArbiterError('INVALID_REQUEST', `limit must be a positive integer, not ${query.limit}`);
  }
  const equalityKeys: string[] = [];
  for (const field of INDEXED_FIELDS) {
    const value = query[field];
    if (value !== undefined) equalityKeys.push(keys.index(field, value));
  }
  const args = [
    query.order,
    // Stryker disable next-line StringLiteral: the script takes any text that is not a number as no cursor
    String(query.after ?? ''),
    String(query.limit),
    epochMs(query.since, 'since'),
    epochMs(query.until, 'until'),
  ];
  const reply = (await QUERY.run(
    redis,
    [keys.head, keys.stream, keys.time, keys.scratch, keys.timeFloor, keys.timeCeiling, ...equalityKeys],
    args,
  )) as [number, number, ...string[]];
  const [total, next, ...jsons] = reply;
  const entries: AuditEntry[] = [];
  for (const json of jsons) {
    const entry = decodeEntry(json);
    if ('invalid' in entry)
      logger.error({ reason: entry.invalid }, 'audit query skipped a malformed stream entry');
    else entries.push(entry);
  }
  return { entries, total, next: next === -1 ? null : next };
}

function epochMs(iso: string | undefined, name: string): string {
  if (iso === undefined) return '';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new ArbiterError('INVALID_REQUEST', `${name} is not an ISO 8601 time: ${iso}`);
  return String(ms);
}
