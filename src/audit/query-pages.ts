import type { AuditEntry, AuditLog, AuditQuery } from './audit-log.js';

/** Every entry a query matches, oldest first, read a page at a time. */
export async function* everyEntry(
  audit: Pick<AuditLog, 'query'>,
  filter: Omit<AuditQuery, 'order' | 'limit' | 'after'>,
  pageSize = 200,
): AsyncGenerator<AuditEntry> {
  let after: number | undefined;
  do {
    const page = await audit.query({
      ...filter,
      order: 'asc',
      limit: pageSize,
      ...(after === undefined ? {} : { after }),
    });
    yield* page.entries;
    after = page.next ?? undefined;
  } while (after !== undefined);
}
