import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditQuery } from '../../src/audit/audit-log.js';
import { openRedisAuditLog, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

function matches(entry: AuditEntry, query: AuditQuery): boolean {
  const t = Date.parse(entry.timestamp);
  return (
    (query.actor_id === undefined || entry.actor_id === query.actor_id) &&
    (query.capability === undefined || entry.capability === query.capability) &&
    (query.since === undefined || t >= Date.parse(query.since)) &&
    (query.until === undefined || t <= Date.parse(query.until))
  );
}

describe('Redis audit log: queries agree with a plain filter for any timestamps and batching', () => {
  let server: RedisServer;
  const logs: RedisAuditLog[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    for (const log of logs) await log.close();
    await server?.dispose();
  });

  it('any order of timestamps, any filter, any page size, one or many entries per script call', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 25 }),
        fc.record(
          {
            actor_id: fc.constantFrom('agent-0', 'agent-1'),
            capability: fc.constantFrom('db.read', 'db.write'),
            since: fc.integer({ min: 0, max: 15 }).map(at),
            until: fc.integer({ min: 0, max: 15 }).map(at),
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.integer({ min: 1, max: 6 }),
        // 0: one append at a time; otherwise concurrent appends, in batches of at most this many.
        fc.integer({ min: 0, max: 8 }),
        async (seconds, filters, order, limit, batchEntries) => {
          run += 1;
          const log = await openRedisAuditLog({
            redis: server.url,
            keyPrefix: `prop${run}:{audit}`,
            maxBatchEntries: Math.max(1, batchEntries),
          });
          logs.push(log);
          const all: AuditEntry[] = [];
          if (batchEntries === 0) {
            for (const [n, second] of seconds.entries()) {
              all.push(await log.append(decisionEvent(n, { timestamp: at(second) })));
            }
          } else {
            const events = seconds.map((second, n) => decisionEvent(n, { timestamp: at(second) }));
            all.push(...(await Promise.all(events.map((event) => log.append(event)))));
            all.sort((a, b) => a.seq - b.seq);
          }
          const want = all.filter((e) => matches(e, { ...filters, order, limit })).map((e) => e.seq);
          if (order === 'desc') want.reverse();
          const got: number[] = [];
          let after: number | undefined;
          for (;;) {
            const page = await log.query({ ...filters, order, limit, ...(after ? { after } : {}) });
            expect(page.total).toBe(want.length);
            got.push(...page.entries.map((e) => e.seq));
            if (page.next === null) break;
            after = page.next;
          }
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 60 },
    );
  });
});
