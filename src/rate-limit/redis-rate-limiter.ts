import type { RateLimiter, RateLimitRequest } from '../engine/index.js';
import { randomUuid } from '../model/index.js';
import { LuaScript } from '../redis/lua-script.js';
import { RequestPathRedis } from '../redis/request-path-redis.js';

/**
 * The same sliding-window log as MemoryRateLimiter, kept in Redis so that every replica
 * counts against one limit (semantics.md step 3). Redis's own clock decides, so replicas
 * with skewed clocks agree. One sorted set per (actor, capability), expiring with its window.
 */
const ADMIT_SCRIPT = new LuaScript(`
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local windowMs = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - windowMs)
local used = redis.call('ZCARD', KEYS[1])
if used >= max then
  return {0, 0}
end
redis.call('ZADD', KEYS[1], nowMs, ARGV[3])
redis.call('PEXPIRE', KEYS[1], windowMs)
return {1, max - used - 1}
`);

/** ADMIT_SCRIPT's answer without writing anything (dry runs). */
const PEEK_SCRIPT = new LuaScript(`
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local used = redis.call('ZCOUNT', KEYS[1], '(' .. (nowMs - tonumber(ARGV[1])), '+inf')
local max = tonumber(ARGV[2])
if used >= max then
  return {0, 0}
end
return {1, max - used - 1}
`);

export interface RedisRateLimiterOptions {
  url: string;
  keyPrefix?: string;
  /** Bound on one admission; past it the proposal fails closed (503). */
  timeoutMs: number;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RequestPathRedis;

  constructor(options: RedisRateLimiterOptions) {
    this.redis = new RequestPathRedis(
      { ...options, keyPrefix: options.keyPrefix ?? 'arbiter:{ratelimit}:' },
      'the rate-limit store (Redis) is unavailable; failing closed',
    );
  }

  admit(request: RateLimitRequest): Promise<{ admitted: boolean; remaining: number }> {
    return this.run(ADMIT_SCRIPT, request, randomUuid());
  }

  peek(request: RateLimitRequest): Promise<{ admitted: boolean; remaining: number }> {
    return this.run(PEEK_SCRIPT, request);
  }

  private async run(
    script: LuaScript,
    request: RateLimitRequest,
    ...extra: string[]
  ): Promise<{ admitted: boolean; remaining: number }> {
    // EVALSHA: the script's text crosses the wire once, not with every admission.
    const [admitted, remaining] = (await this.redis.run((redis) =>
      script.run(
        redis,
        [this.redis.key(request.key)],
        [String(request.windowSeconds * 1000), String(request.maxRequests), ...extra],
      ),
    )) as [number, number];
    return { admitted: admitted === 1, remaining };
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
