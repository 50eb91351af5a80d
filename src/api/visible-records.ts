import type { Request } from 'express';
import type { AuditEntry, AuditLog, AuditPage, AuditQuery } from '../audit/audit-log.js';
import { SEES_EVERYTHING, type RecordVisibility } from '../auth/index.js';
import { ArbiterError, recordNamespace } from '../model/index.js';

/** What requireScope decided the caller may see (everything where no guard ran). */
export function visibilityOfRequest(req: Request): RecordVisibility {
  return req.visibility ?? SEES_EVERYTHING;
}

/** Whether the caller may see this entry (its namespace's records, or all). */
export function seesEntry(visibility: RecordVisibility, entry: AuditEntry): Promise<boolean> {
  return visibility.all ? Promise.resolve(true) : visibility.sees(recordNamespace(entry));
}

/**
 * A record the caller may not see is answered as one that does not exist (404), so that
 * a team learns nothing of another's decisions, not even that they exist.
 */
export async function requireVisible(
  visibility: RecordVisibility,
  namespace: string | undefined,
  notFound: string,
): Promise<void> {
  if (!visibility.all && !(await visibility.sees(namespace))) throw new ArbiterError('NOT_FOUND', notFound);
}

/** The items the caller may see, in their order. */
export async function visibleItems<T>(
  items: readonly T[],
  visibility: RecordVisibility,
  namespaceOf: (item: T) => string | undefined,
): Promise<T[]> {
  if (visibility.all) return [...items];
  const seen = await Promise.all(items.map((item) => visibility.sees(namespaceOf(item))));
  return items.filter((_, i) => seen[i]);
}

/** Entries read per scan step when filtering a page for a caller limited to namespaces. */
const SCAN_PAGE = 500;

/**
 * One page of a query as the caller sees it: for a cluster-scope reader the log's own page;
 * for one who may see one namespace only, the log's page of that namespace (its `namespace`
 * filter reads an entry's namespace as seesEntry does, and is indexed); else the matching
 * entries of visible namespaces only, with their exact total and a cursor that continues
 * after the last one shown. That filter runs over every match (the total must count them
 * all), so such a reader's list costs a scan of what the filters match.
 */
export async function visiblePage(
  audit: Pick<AuditLog, 'query'>,
  query: AuditQuery,
  visibility: RecordVisibility,
): Promise<AuditPage> {
  if (visibility.all) return audit.query(query);
  const only = visibility.onlyNamespace;
  if (only !== undefined) return namespacePage(audit, query, only);
  return scannedPage(audit, query, visibility);
}

/** The log's page of one namespace's entries: none when the query names another. */
function namespacePage(
  audit: Pick<AuditLog, 'query'>,
  query: AuditQuery,
  namespace: string,
): Promise<AuditPage> {
  if (query.namespace !== undefined && query.namespace !== namespace)
    return Promise.resolve({ entries: [], total: 0, next: null });
  return audit.query({ ...query, namespace });
}

/** Every match read in scan steps, the visible ones counted and paged. */
async function scannedPage(
  audit: Pick<AuditLog, 'query'>,
  query: AuditQuery,
  visibility: RecordVisibility,
): Promise<AuditPage> {
  const { after, limit, ...filters } = query;
  const entries: AuditEntry[] = [];
  let total = 0;
  let more = false;
  let from: number | undefined;
  do {
    const page = await audit.query({
      ...filters,
      limit: SCAN_PAGE,
      ...(from === undefined ? {} : { after: from }),
    });
    for (const entry of page.entries) {
      if (!(await seesEntry(visibility, entry))) continue;
      total++;
      if (after !== undefined && !beyond(entry.seq, after, query.order)) continue;
      if (entries.length < limit) entries.push(entry);
      else more = true;
    }
    from = page.next ?? undefined;
  } while (from !== undefined);
  return { entries, total, next: more ? entries.at(-1)!.seq : null };
}

/** Whether seq comes after the cursor in the query's order. */
function beyond(seq: number, after: number, order: AuditQuery['order']): boolean {
  return order === 'asc' ? seq > after : seq < after;
}
