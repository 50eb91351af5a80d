import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedisAuditLog, type RedisAuditLog } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

describe('Redis audit log: writers under sustained contention', () => {
  let server: RedisServer;
  const logs: RedisAuditLog[] = [];

  beforeAll(async () => {
    server = await startRedisServer({ appendfsync: 'no' });
  });
  afterAll(async () => {
    for (const log of logs) await log.close();
    await server?.dispose();
  });

  it('starves no writer: four writers, each keeping appends in flight, see no rejection', async () => {
    for (let i = 0; i < 4; i += 1) {
      logs.push(
        await openRedisAuditLog({ redis: server.url, keyPrefix: 'fair:{audit}', appendTimeoutMs: 2000 }),
      );
    }
    const until = Date.now() + 4000;
    const failures: string[] = [];
    let stored = 0;
    const lane = async (log: RedisAuditLog) => {
      for (let n = 0; Date.now() < until; n += 1) {
        try {
          await log.append(decisionEvent(n));
          stored += 1;
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    };
    await Promise.all(logs.flatMap((log) => Array.from({ length: 16 }, () => lane(log))));
    expect(failures.slice(0, 3)).toEqual([]);
    expect(stored).toBeGreaterThan(0);
    expect(await logs[0]!.verify()).toMatchObject({ ok: true, entries_checked: stored });
  }, 30_000);
});
