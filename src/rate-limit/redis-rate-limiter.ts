import {
  admissions,
  single,
  type RateLimitAdmissions,
  type RateLimiter,
  type RateLimitRequest,
} from '../engine/index.js';
import { randomUuid } from '../model/index.js';
import { LuaScript } from '../redis/lua-script.js';
import { RequestPathRedis } from '../redis/request-path-redis.js';

/**
 * The same sliding-window log as MemoryRateLimiter, kept in Redis so that every replica
 * counts against one limit (semantics.md step 3). Redis's own clock decides, so replicas
 * with skewed clocks agree. One sorted set per counter key, expiring with its window.
 * Several limits are asked in one script, so that the check and the counting of all of
 * them are one atomic step: a request one limit refuses spends none of the others.
 * ARGV: window (ms) and maximum per key, then the member to add. Answers the requests
 * already in each window; admissions() reads it as the script decided.
 */
const ADMIT_SCRIPT = new LuaScript(`
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local used = {}
local room = true
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', nowMs - tonumber(ARGV[2 * i - 1]))
  used[i] = redis.call('ZCARD', KEYS[i])
  if used[i] >= tonumber(ARGV[2 * i]) then
    room = false
  end
end
if room then
  for i = 1, #KEYS do
    redis.call('ZADD', KEYS[i], nowMs, ARGV[2 * #KEYS + 1])
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2 * i - 1]))
  end
end
return used
`);

/** ADMIT_SCRIPT's count without writing anything (dry runs). */
const PEEK_SCRIPT = new LuaScript(`
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local used = {}
for i = 1, #KEYS do
  used[i] = redis.call('ZCOUNT', KEYS[i], '(' .. (nowMs - tonumber(ARGV[2 * i - 1])), '+inf')
end
return used
`);

export interface RedisRateLimiterOptions {
  url: string;
  /** Keep a hash tag in it: a script's keys must share one cluster slot. */
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

  async admit(request: RateLimitRequest): Promise<{ admitted: boolean; remaining: number }> {
    return single(await this.admitAll([request]));
  }

  async peek(request: RateLimitRequest): Promise<{ admitted: boolean; remaining: number }> {
    return single(await this.peekAll([request]));
  }

  admitAll(requests: readonly RateLimitRequest[]): Promise<RateLimitAdmissions> {
    return this.run(ADMIT_SCRIPT, requests, randomUuid());
  }

  peekAll(requests: readonly RateLimitRequest[]): Promise<RateLimitAdmissions> {
    return this.run(PEEK_SCRIPT, requests);
  }

  private async run(
    script: LuaScript,
    requests: readonly RateLimitRequest[],
    ...extra: string[]
  ): Promise<RateLimitAdmissions> {
    if (requests.length === 0) return admissions([], []);
    // EVALSHA: the script's text crosses the wire once, not with every admission.
    const used = (await this.redis.run((redis) =>
      script.run(
        redis,
        requests.map((r) => this.redis.key(r.key)),
        [...requests.flatMap((r) => [String(r.windowSeconds * 1000), String(r.maxRequests)]), ...extra],
      ),
    )) as number[];
    return admissions(requests, used);
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
