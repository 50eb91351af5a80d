import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditPage, AuditQuery } from '../audit/audit-log.js';
import { auditQueryMatcher } from '../audit/query-match.js';
import { seesNamespaces, SEES_EVERYTHING } from '../auth/index.js';
import { visiblePage } from './visible-records.js';

/** Entries 1..n of actors cycling over team-a, team-b and a cluster actor. */
function entries(n: number): AuditEntry[] {
  const actors = ['team-a/bot', 'team-b/bot', 'agent-1'];
  return Array.from({ length: n }, (_, i) => ({
    seq: i + 1,
    event_type: 'governance.decision',
    actor_id: actors[i % 3]!,
    timestamp: new Date(1_700_000_000_000 + i).toISOString(),
  })) as AuditEntry[];
}

/** The log's paging contract over an array: the filters, `after` in the order, `limit`, exact total. */
function logOf(all: AuditEntry[]) {
  return {
    query: (query: AuditQuery): Promise<AuditPage> => {
      const matching = all.filter(auditQueryMatcher(query));
      const ordered = query.order === 'asc' ? matching : [...matching].reverse();
      const rest =
        query.after === undefined
          ? ordered
          : ordered.filter((e) => (query.order === 'asc' ? e.seq > query.after! : e.seq < query.after!));
      const page = rest.slice(0, query.limit);
      return Promise.resolve({
        entries: page,
        total: matching.length,
        next: rest.length > query.limit ? page.at(-1)!.seq : null,
      });
    },
  };
}

async function everyPage(
  log: ReturnType<typeof logOf>,
  order: 'asc' | 'desc',
  limit: number,
  namespaces: string[],
) {
  const seqs: number[][] = [];
  const totals = new Set<number>();
  let after: number | undefined;
  do {
    const page = await visiblePage(
      log,
      { order, limit, ...(after === undefined ? {} : { after }) },
      seesNamespaces(new Set(namespaces)),
    );
    seqs.push(page.entries.map((e) => e.seq));
    totals.add(page.total);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return { seqs, totals: [...totals] };
}

describe('visiblePage', () => {
  // 1300 entries: more than one scan step of 500.
  const log = logOf(entries(1300));

  it('pages the visible entries only, full pages but the last, with the exact total on every page', async () => {
    const teamA = entries(1300)
      .filter((e) => e.actor_id === 'team-a/bot')
      .map((e) => e.seq);
    const asc = await everyPage(log, 'asc', 200, ['team-a']);
    expect(asc.seqs.flat()).toEqual(teamA);
    expect(asc.seqs.slice(0, -1).every((page) => page.length === 200)).toBe(true);
    expect(asc.totals).toEqual([teamA.length]);
    const desc = await everyPage(log, 'desc', 7, ['team-a', 'team-b']);
    expect(desc.seqs.flat()).toEqual(
      entries(1300)
        .filter((e) => e.actor_id !== 'agent-1')
        .map((e) => e.seq)
        .reverse(),
    );
    expect(desc.totals).toEqual([867]);
  });

  it('ends without a cursor when the last visible entry is shown, and shows nothing of no namespace', async () => {
    const small = logOf(entries(3));
    expect(await visiblePage(small, { order: 'asc', limit: 1 }, seesNamespaces(new Set(['team-b'])))).toEqual(
      {
        entries: [expect.objectContaining({ seq: 2 })],
        total: 1,
        next: null,
      },
    );
    expect(
      await visiblePage(small, { order: 'asc', limit: 5 }, seesNamespaces(new Set(['agent-1']))),
    ).toEqual({
      entries: [],
      total: 0,
      next: null,
    });
  });

  it("is the log's own page for a cluster-scope reader", async () => {
    const small = logOf(entries(5));
    const query: AuditQuery = { order: 'desc', limit: 2 };
    expect(await visiblePage(small, query, SEES_EVERYTHING)).toEqual(await small.query(query));
  });
});
