import { LuaScript } from '../../redis/lua-script.js';
import { RequestPathRedis } from '../../redis/request-path-redis.js';
import type { McpSessionRecord, McpSessions, McpSessionsOptions } from './mcp-sessions.js';

export interface RedisMcpSessionsOptions extends McpSessionsOptions {
  url: string;
  /** Default `arbiter:{mcp-sessions}:`, beside the audit log's and the rate limits' keys. */
  keyPrefix?: string;
  /** Bound on one call; past it the request is refused (503). */
  timeoutMs: number;
}

/**
 * KEYS: the sorted set of open sessions (scored by when each ends), the session's record.
 * ARGV: now, ends at, most sessions, id, record, idle ms. Counts open sessions and records
 * the new one in one step, so that replicas opening sessions at once cannot pass the bound.
 */
const OPEN = new LuaScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6])
return 1
`);

/** KEYS as OPEN's; ARGV: ends at, idle ms, id. The record, its idle period restarted. */
const USE = new LuaScript(`
local record = redis.call('GET', KEYS[2])
if not record then return false end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
return record
`);

/** Replicas sharing a Redis: each record expires with its session's idle period. */
export class RedisMcpSessions implements McpSessions {
  private readonly redis: RequestPathRedis;

  constructor(
    private readonly options: RedisMcpSessionsOptions,
    private readonly clock: () => Date,
  ) {
    this.redis = new RequestPathRedis(
      { ...options, keyPrefix: options.keyPrefix ?? 'arbiter:{mcp-sessions}:' },
      'the store of MCP sessions (Redis) is unavailable, so no MCP session can be opened or used now',
    );
  }

  async open(id: string, record: McpSessionRecord): Promise<boolean> {
    const now = this.clock().getTime();
    const { idleMs, maxSessions } = this.options;
    const opened = await this.redis.run((redis) =>
      OPEN.run(redis, this.keys(id), [now, now + idleMs, maxSessions, id, JSON.stringify(record), idleMs]),
    );
    return Number(opened) === 1;
  }

  async use(id: string): Promise<McpSessionRecord | undefined> {
    const { idleMs } = this.options;
    const endsAt = this.clock().getTime() + idleMs;
    const record = await this.redis.run((redis) => USE.run(redis, this.keys(id), [endsAt, idleMs, id]));
    return typeof record === 'string' ? (JSON.parse(record) as McpSessionRecord) : undefined;
  }

  async end(id: string): Promise<void> {
    const [open, session] = this.keys(id);
    await this.redis.run((redis) => redis.multi().del(session).zrem(open, id).exec());
  }

  close(): Promise<void> {
    return this.redis.close();
  }

  private keys(id: string): [string, string] {
    return [this.redis.key('open'), this.redis.key(`session:${id}`)];
  }
}
