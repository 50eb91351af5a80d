import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTCOMES, type Outcome } from '../../model/index.js';
import type { AuditEntry, AuditQuery } from '../audit-log.js';
import { auditQueryMatcher } from '../query-match.js';
import type { FileAuditLog } from './file-audit-log.js';
import { event, openLog, tempDir } from './test-fixtures.js';

const ACTORS = ['a1', 'a2', 'a3'];
const CAPABILITIES = ['db.read', 'db.write'];
const TYPES = ['governance.decision', 'policy.updated'] as const;
const BASE_MS = Date.parse('2025-03-01T00:00:00Z');

let dir: string;
let cleanup: () => Promise<void>;
let log: FileAuditLog;
let all: AuditEntry[];

/** 120 entries; every 7th timestamp jumps back in time (a skewed caller clock). */
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  log = await openLog(dir, { checkpointEvery: { entries: 25, seconds: 3600 } });
  all = [];
  for (let i = 0; i < 120; i += 1) {
    const skew = i % 7 === 6 ? -90_000 : 0;
    all.push(
      await log.append(
        event({
          actor_id: ACTORS[i % 3]!,
          capability: i % 10 === 9 ? null : CAPABILITIES[i % 2]!,
          outcome: OUTCOMES[i % 4]!,
          decision_id: `dec-${Math.floor(i / 3)}`,
          event_type: TYPES[i % 5 === 0 ? 1 : 0],
          timestamp: new Date(BASE_MS + i * 10_000 + skew).toISOString(),
        }),
      ),
    );
  }
  // Restart: the indexes are rebuilt from the file.
  await log.close();
  log = await openLog(dir);
});
afterAll(async () => {
  await log.close();
  await cleanup();
});

function expected(query: AuditQuery): AuditEntry[] {
  const matches = all.filter(auditQueryMatcher(query));
  return query.order === 'asc' ? matches : [...matches].reverse();
}

/** Pages through every result and checks each page's total. */
async function everyPage(query: Omit<AuditQuery, 'after'>): Promise<AuditEntry[]> {
  const seen: AuditEntry[] = [];
  let after: number | undefined;
  for (let pages = 0; pages < 500; pages += 1) {
    const page = await log.query({ ...query, ...(after === undefined ? {} : { after }) });
    expect(page.total).toBe(expected(query).length);
    expect(page.entries.length).toBeLessThanOrEqual(query.limit);
    seen.push(...page.entries);
    if (page.next === null) return seen;
    expect(page.next).toBe(page.entries.at(-1)?.seq);
    after = page.next;
  }
  throw new Error('paging did not end');
}

const at = (i: number) => new Date(BASE_MS + i * 10_000).toISOString();

describe('FileAuditLog query', () => {
  const cases: [string, Omit<AuditQuery, 'order' | 'limit'>][] = [
    ['no filter', {}],
    ['actor_id', { actor_id: 'a2' }],
    ['capability', { capability: 'db.write' }],
    ['outcome', { outcome: 'DENY' }],
    ['decision_id', { decision_id: 'dec-7' }],
    ['event_type', { event_type: 'policy.updated' }],
    ['unknown value', { actor_id: 'nobody' }],
    ['combined', { actor_id: 'a1', capability: 'db.read', outcome: 'ALLOW' }],
    ['combined with event type', { event_type: 'governance.decision', outcome: 'ESCALATE', actor_id: 'a3' }],
    ['since', { since: at(50) }],
    ['until', { until: at(40) }],
    ['time range', { since: at(30), until: at(70) }],
    ['time range with an offset', { since: '2025-03-01T02:05:00+02:00', until: at(20) }],
    ['time range and filters', { since: at(10), until: at(100), actor_id: 'a1', outcome: 'ALLOW' }],
    ['empty time range', { since: at(70), until: at(30) }],
  ];
  for (const [name, filters] of cases) {
    for (const order of ['asc', 'desc'] as const) {
      it(`${name}, ${order}: every page together is exactly the matching entries, once`, async () => {
        const got = await everyPage({ ...filters, order, limit: 7 });
        expect(got.map((e) => e.seq)).toEqual(expected({ ...filters, order, limit: 7 }).map((e) => e.seq));
        expect(got).toEqual(expected({ ...filters, order, limit: 7 }));
      });
    }
  }

  it('matches an arbitrary query exactly (property)', async () => {
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const time = fc.integer({ min: -20, max: 140 }).map(at);
    const queries = fc.record({
      actor_id: maybe(fc.constantFrom(...ACTORS, 'zz')),
      capability: maybe(fc.constantFrom(...CAPABILITIES)),
      outcome: maybe(fc.constantFrom<Outcome>(...OUTCOMES)),
      decision_id: maybe(fc.integer({ min: 0, max: 45 }).map((n) => `dec-${n}`)),
      event_type: maybe(fc.constantFrom(...TYPES)),
      since: maybe(time),
      until: maybe(time),
      order: fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
      limit: fc.integer({ min: 1, max: 50 }),
    });
    await fc.assert(
      fc.asyncProperty(queries, async (raw) => {
        const query = Object.fromEntries(
          Object.entries(raw).filter(([, v]) => v !== undefined),
        ) as unknown as AuditQuery;
        const got = await everyPage(query);
        expect(got.map((e) => e.seq)).toEqual(expected(query).map((e) => e.seq));
      }),
      { numRuns: 150 },
    );
  });

  it('after is an exclusive bound in the direction of order', async () => {
    const asc = await log.query({ order: 'asc', limit: 3, after: 10 });
    expect(asc.entries.map((e) => e.seq)).toEqual([11, 12, 13]);
    expect(asc.next).toBe(13);
    const desc = await log.query({ order: 'desc', limit: 3, after: 10 });
    expect(desc.entries.map((e) => e.seq)).toEqual([9, 8, 7]);
    const last = await log.query({ order: 'desc', limit: 3, after: 3 });
    expect(last).toMatchObject({ total: 120, next: null });
    expect(last.entries.map((e) => e.seq)).toEqual([2, 1]);
  });

  it('get, byDecision and head', async () => {
    expect(await log.get(all[42]!.id)).toEqual(all[42]);
    expect(await log.get('aud_missing')).toBeUndefined();
    expect(await log.byDecision('dec-5')).toEqual(all.slice(15, 18));
    expect(await log.byDecision('dec-none')).toEqual([]);
    expect(await log.head()).toEqual({ seq: 120, hash: all[119]!.hash });
  });

  it('rejects an unparsable time bound as a bad request', async () => {
    await expect(log.query({ order: 'asc', limit: 5, since: 'soon' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });
});
