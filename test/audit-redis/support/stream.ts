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
