import type { Redis } from 'ioredis';
import type { AuditEntry } from '../../../src/audit/audit-log.js';
import type { RedisAuditKeys } from '../../../src/audit/redis/index.js';

/** The entries the stream holds, read as someone with redis-cli would: not through the log. */
export async function streamEntries(admin: Redis, keys: RedisAuditKeys): Promise<AuditEntry[]> {
  const items = await admin.xrange(keys.stream, '-', '+');
  return items.map(([, fields]) => JSON.parse(fields[1] as string) as AuditEntry);
}

/** Redis's clock (TIME) in epoch ms: the clock of leases and of deadlines in the scripts. */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Gives the lease to another writer for `forMs` of Redis's clock; returns when it ends (lease_until). */
export async function leaseToAnotherWriter(
  admin: Redis,
  keys: RedisAuditKeys,
  forMs: number,
): Promise<number> {
  const leaseUntil = (await redisNowMs(admin)) + forMs;
  await admin.hset(keys.head, 'lease', 'another-writer', 'lease_until', leaseUntil);
  return leaseUntil;
}
