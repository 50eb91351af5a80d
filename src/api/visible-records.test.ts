import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditPage, AuditQuery } from '../audit/audit-log.js';
import { auditQueryMatcher } from '../audit/query-match.js';
import { seesNamespaces, SEES_EVERYTHING, type RecordVisibility } from '../auth/index.js';
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

describe('visiblePage for a caller who may see one namespace', () => {
  const all = entries(1300);
  /** The log, recording every query it is asked. */
  function recordingLog() {
    const asked: AuditQuery[] = [];
    const inner = logOf(all);
    return { asked, query: (query: AuditQuery) => (asked.push(query), inner.query(query)) };
  }
  /** The same reach without saying it is one namespace: the scan. */
  const scanning = (namespace: string): RecordVisibility => ({
    all: false,
    sees: (ns) => Promise.resolve(ns === namespace),
  });

  it.each([
    [{ order: 'asc', limit: 200 }],
    [{ order: 'desc', limit: 7, after: 1000 }],
    [{ order: 'desc', limit: 50, namespace: 'team-a', event_type: 'governance.decision' }],
    [{ order: 'asc', limit: 5, namespace: 'team-b' }],
  ] as Array<[AuditQuery]>)(
    "gives the scan's page for %o, asking the log once with the namespace filter",
    async (query) => {
      const log = recordingLog();
      const page = await visiblePage(log, query, seesNamespaces(new Set(['team-a'])));
      expect(page).toEqual(await visiblePage(logOf(all), query, scanning('team-a')));
      const expected = query.namespace === undefined || query.namespace === 'team-a';
      expect(log.asked).toEqual(expected ? [{ ...query, namespace: 'team-a' }] : []);
    },
  );

  it('keeps the scan for several namespaces', async () => {
    const log = recordingLog();
    await visiblePage(log, { order: 'asc', limit: 10 }, seesNamespaces(new Set(['team-a', 'team-b'])));
    expect(log.asked.every((q) => q.namespace === undefined && q.limit === 500)).toBe(true);
    expect(log.asked).toHaveLength(3);
  });
});
