import type { ApiClient, Query } from './client.js';
import type { Page } from './types.js';

/**
 * Follows a list's cursors, 200 items a page, up to `maxPages` pages; `complete` says
 * whether the list ended before that.
 */
export async function fetchPages<K extends string, T>(
  client: ApiClient,
  path: string,
  key: K,
  query: Query = {},
  maxPages = 5,
): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const answer = await client.get<Page<K, T>>(path, { ...query, limit: '200', cursor });
    items.push(...answer[key]);
    if (answer.cursor === null) return { items, complete: true };
    cursor = answer.cursor;
  }
  return { items, complete: false };
}
