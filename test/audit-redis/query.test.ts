import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditQuery } from '../../src/audit/audit-log.js';
import { openRedisAuditLog, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

type Filters = Omit<AuditQuery, 'order' | 'limit' | 'after'>;

/** An actor `team-a/bot` is of namespace team-a. */
const inNamespace = (e: AuditEntry, namespace: string | undefined) =>
  namespace === undefined || e.actor_id?.startsWith(`${namespace}/`) === true;

/** The reference answer: filter every entry in memory. */
function expected(all: AuditEntry[], filters: Filters, order: 'asc' | 'desc'): number[] {
  const since = filters.since ? Date.parse(filters.since) : -Infinity;
  const until = filters.until ? Date.parse(filters.until) : Infinity;
  const seqs = all
    .filter(
      (e) =>
        (filters.actor_id === undefined || e.actor_id === filters.actor_id) &&
        (filters.capability === undefined || e.capability === filters.capability) &&
        (filters.outcome === undefined || e.outcome === filters.outcome) &&
        (filters.decision_id === undefined || e.decision_id === filters.decision_id) &&
        (filters.event_type === undefined || e.event_type === filters.event_type) &&
        Date.parse(e.timestamp) >= since &&
        Date.parse(e.timestamp) <= until,
    )
    .filter((e) => inNamespace(e, filters.namespace))
    .map((e) => e.seq);
  return order === 'asc' ? seqs : seqs.reverse();
}

const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

const CASES: Filters[] = [
  {},
  { actor_id: 'agent-1' },
  { capability: 'db.write', outcome: 'ALLOW' },
  { actor_id: 'agent-2', capability: 'db.read', event_type: 'governance.decision' },
  { decision_id: 'dec-shared' },
  { event_type: 'policy.updated' },
  { since: at(10), until: at(30) },
  { since: at(25) },
  { until: at(5) },
  { actor_id: 'agent-0', since: at(3), until: at(40) },
  { actor_id: 'agent-1', since: at(10), until: at(12) },
  { outcome: 'DENY', capability: 'db.read', since: at(0), until: at(59) },
  { actor_id: 'nobody' },
  { since: at(100) },
  { since: at(20), until: at(20) },
  { until: at(0) },
  { since: at(59) },
  { capability: 'db.read', since: at(20), until: at(20) },
  { namespace: 'team-a' },
  { namespace: 'team-b', capability: 'db.write' },
  { namespace: 'team-a', actor_id: 'team-a/bot', since: at(10) },
  { namespace: 'team-a', outcome: 'DENY', event_type: 'governance.decision', until: at(40) },
  { namespace: 'agent-1' },
  { namespace: 'nobody' },
];

/** Some actors namespaced (`team-a/bot`), so that the namespace filter has something to select. */
const actorOf = (n: number) =>
  [`agent-${n % 3}`, 'team-a/bot', 'team-a/other', 'team-b/bot', `agent-${n % 3}`][n % 5]!;

describe('Redis audit log: filtered queries and paging', () => {
  let server: RedisServer;
  let log: RedisAuditLog;
  const all: AuditEntry[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
    log = await openRedisAuditLog({ redis: server.url, keyPrefix: 'query:{audit}' });
    // Timestamps out of seq order, as from replicas with skewed clocks; some config events without outcome.
    const appends = Array.from({ length: 60 }, (_, n) =>
      log.append(
        n % 10 === 9
          ? decisionEvent(n, {
              event_type: 'policy.updated',
              outcome: null,
              capability: null,
              decision_id: null,
              timestamp: at((n * 37) % 60),
            })
          : decisionEvent(n, {
              actor_id: actorOf(n),
              timestamp: at((n * 37) % 60),
              ...(n % 7 === 0 ? { decision_id: 'dec-shared' } : {}),
            }),
      ),
    );
    all.push(...(await Promise.all(appends)));
    // Ties, and late entries far behind the newest timestamp.
    for (const [n, second] of [
      [60, 20],
      [61, 20],
      [62, 59],
      [63, 0],
      [64, 20],
    ] as const) {
      all.push(await log.append(decisionEvent(n, { timestamp: at(second) })));
    }
    all.sort((a, b) => a.seq - b.seq);
  });
  afterAll(async () => {
    await log?.close();
    await server?.dispose();
  });

  for (const filters of CASES) {
    for (const order of ['asc', 'desc'] as const) {
      it(`pages ${JSON.stringify(filters)} ${order} exactly`, async () => {
        const want = expected(all, filters, order);
        const got: number[] = [];
        let after: number | undefined;
        for (let page = 0; page < 20; page += 1) {
          const result = await log.query({ ...filters, order, limit: 7, ...(after ? { after } : {}) });
          expect(result.total).toBe(want.length);
          got.push(...result.entries.map((e) => e.seq));
          for (const entry of result.entries) expect(entry).toEqual(all[entry.seq - 1]);
          if (result.next === null) break;
          after = result.next;
        }
        expect(got).toEqual(want);
      });
    }
  }

  it('returns one full page with next null when everything fits', async () => {
    const page = await log.query({ actor_id: 'agent-1', order: 'asc', limit: 200 });
    expect(page.next).toBeNull();
    expect(page.entries.map((e) => e.seq)).toEqual(expected(all, { actor_id: 'agent-1' }, 'asc'));
  });

  it('rejects a bad time bound as invalid input, naming the bound', async () => {
    for (const bound of ['since', 'until'] as const) {
      await expect(log.query({ [bound]: 'yesterday', order: 'asc', limit: 5 })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: `${bound} is not an ISO 8601 time: yesterday`,
      });
    }
  });
});

describe('Redis audit log: a log written before the namespace indexes', () => {
  it('gets them built when opened, and keeps them as it is appended to', async () => {
    const server = await startRedisServer();
    const keyPrefix = 'older:{audit}';
    try {
      const first = await openRedisAuditLog({ redis: server.url, keyPrefix });
      for (let n = 0; n < 6; n++) await first.append(decisionEvent(n, { actor_id: actorOf(n) }));
      const keys = first.keys;
      await first.close();
      // As an older version left it: no namespace index, no mark that they were built.
      const { Redis } = await import('ioredis');
      const raw = new Redis(server.url);
      const namespaceKeys = await raw.keys(`${keyPrefix}:idx:namespace*`);
      expect(namespaceKeys.length).toBeGreaterThan(1);
      await raw.del(...namespaceKeys);
      raw.disconnect();
      expect(keys.namespaceIndexesBuilt).toBe(`${keyPrefix}:idx:namespace-built`);

      const reopened = await openRedisAuditLog({ redis: server.url, keyPrefix });
      try {
        await reopened.append(decisionEvent(6, { actor_id: 'team-a/late' }));
        const page = await reopened.query({ namespace: 'team-a', order: 'asc', limit: 50 });
        expect(page.entries.map((e) => e.actor_id)).toEqual(['team-a/bot', 'team-a/other', 'team-a/late']);
        expect(page.total).toBe(3);
      } finally {
        await reopened.close();
      }
    } finally {
      await server.dispose();
    }
  });
});
