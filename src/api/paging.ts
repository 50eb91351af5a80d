import { ArbiterError } from '../model/index.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** What `limit` takes, in the words its error and the OpenAPI document use. */
export const LIMIT_RULE = `a whole number from 1 to ${MAX_LIMIT}`;

/** The one check of `limit` (the query schemas leave it to this): digits only, 1 to MAX_LIMIT. */
export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = Number(raw);
  if (!/^[0-9]{1,4}$/.test(raw) || limit < 1 || limit > MAX_LIMIT) {
    throw new ArbiterError('INVALID_REQUEST', `invalid query: limit must be ${LIMIT_RULE}`);
  }
  return limit;
}

/**
 * Cursors are opaque to clients: base64url of the position and the query they belong to,
 * so a cursor reused with other filters is rejected instead of paging wrongly.
 */
export function encodeCursor(position: string | number, scope: string): string {
  return Buffer.from(JSON.stringify({ p: position, s: scope }), 'utf8').toString('base64url');
}

export function decodeCursor<T extends string | number>(
  raw: string | undefined,
  scope: string,
  kind: 'string' | 'number',
): T | undefined {
  if (raw === undefined) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw new ArbiterError(
      'INVALID_REQUEST',
      'cursor is not valid; pass the cursor of the previous page unchanged',
    );
  }
  const cursor = decoded as { p?: unknown; s?: unknown } | null;
  if (typeof cursor !== 'object' || cursor === null || typeof cursor.p !== kind) {
    throw new ArbiterError(
      'INVALID_REQUEST',
      'cursor is not valid; pass the cursor of the previous page unchanged',
    );
  }
  if (cursor.s !== scope) {
    throw new ArbiterError('INVALID_REQUEST', 'cursor belongs to a query with other filters');
  }
  return cursor.p as T;
}

/** Pages an in-memory sorted list by a string key (names), for configuration listings. */
export function pageByKey<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  limit: number,
  after: string | undefined,
) {
  const start = after === undefined ? 0 : items.findIndex((item) => keyOf(item) > after);
  const from = start === -1 ? items.length : start;
  const page = items.slice(from, from + limit);
  const last = page[page.length - 1];
  const more = from + limit < items.length && last !== undefined;
  return { page, next: more ? keyOf(last) : null };
}
