import { RequestPathRedis } from '../redis/request-path-redis.js';
import type { OneTimeUses } from './one-time-uses.js';

export interface RedisOneTimeUsesOptions {
  url: string;
  /** Default `arbiter:{uses}:`, beside the audit log's and the rate limits' keys. */
  keyPrefix?: string;
  /** Bound on one claim; past it the use is refused (503). */
  timeoutMs: number;
}

/** Replicas sharing a Redis: `SET key NX PXAT until` claims atomically, and ends with the claim. */
export class RedisOneTimeUses implements OneTimeUses {
  private readonly redis: RequestPathRedis;

  constructor(options: RedisOneTimeUsesOptions) {
    this.redis = new RequestPathRedis(
      { ...options, keyPrefix: options.keyPrefix ?? 'arbiter:{uses}:' },
      'the store of one-time uses (Redis) is unavailable, so no approval or confirmation token can be used now; failing closed',
    );
  }

  async claim(key: string, until: Date): Promise<boolean> {
    const set = await this.redis.run((redis) =>
      redis.set(this.redis.key(key), '1', 'PXAT', until.getTime(), 'NX'),
    );
    return set === 'OK';
  }

  async release(key: string): Promise<void> {
    await this.redis.run((redis) => redis.del(this.redis.key(key)));
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
