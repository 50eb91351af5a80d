import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditAppendInDoubtError, openRedisAuditLog } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

describe('Redis audit log: WAIT for replicas', () => {
  let primary: RedisServer;
  let replica: RedisServer;

  beforeAll(async () => {
    // No 5 s wait before the first full sync.
    primary = await startRedisServer({ extraArgs: ['--repl-diskless-sync-delay', '0'] });
    replica = await startRedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] });
    const onReplica = new Redis(replica.url);
    const deadline = Date.now() + 10_000;
    while (!/master_link_status:up/.test(await onReplica.info('replication'))) {
      if (Date.now() > deadline) throw new Error('the replica did not sync');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    onReplica.disconnect();
  });
  afterAll(async () => {
    await replica?.dispose();
    await primary?.dispose();
  });

  it('acknowledges once the replica has the entry', async () => {
    const log = await openRedisAuditLog({
      redis: primary.url,
      keyPrefix: 'wait-ok:{audit}',
      waitReplicas: { count: 1, timeoutMs: 2000 },
    });
    const entry = await log.append(decisionEvent(1));
    const onReplica = new Redis(replica.url);
    expect(await onReplica.xlen('wait-ok:{audit}:stream')).toBe(1);
    onReplica.disconnect();
    expect(entry.seq).toBe(1);
    await log.close();
  });

  it('rejects as in doubt when fewer replicas confirm than required, and the chain goes on', async () => {
    const log = await openRedisAuditLog({
      redis: primary.url,
      keyPrefix: 'wait-short:{audit}',
      waitReplicas: { count: 2, timeoutMs: 100 },
    });
    await expect(log.append(decisionEvent(1))).rejects.toBeInstanceOf(AuditAppendInDoubtError);
    // The entry is on the primary: the next one links to it.
    await expect(log.append(decisionEvent(2))).rejects.toBeInstanceOf(AuditAppendInDoubtError);
    expect(await log.head()).toMatchObject({ seq: 2 });
    expect((await log.verify()).ok).toBe(true);
    await log.close();
  });
});
