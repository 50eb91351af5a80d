import type { Redis } from 'ioredis';

/**
 * Redis's clock minus ours, in ms, from one TIME round trip (error at most half of it).
 * Lets a script refuse a command that reaches Redis after its caller gave up.
 */
export async function measureClockOffsetMs(redis: Redis): Promise<number> {
  const before = Date.now();
  const [seconds, micros] = await redis.time();
  const after = Date.now();
  const redisMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return redisMs - (before + after) / 2;
}
