import { Redis } from 'ioredis';
import { connectRedis } from './redis-connection.js';

/**
 * Who of several replicas does a one-off job (writing an expiry): the first to claim its
 * key, for a while. A replica that claimed and then failed lets the claim lapse, so
 * another (or itself) tries again after ttlMs.
 */
export interface ReplicaClaims {
  claim(key: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** One process (the file audit log): claims are remembered in memory. */
export class LocalClaims implements ReplicaClaims {
  private readonly until = new Map<string, number>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.nowMs();
    for (const [k, until] of this.until) if (until <= now) this.until.delete(k);
    if (this.until.has(key)) return Promise.resolve(false);
    this.until.set(key, now + ttlMs);
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Replicas sharing a Redis: `SET key NX PX ttl` decides, atomically. */
export class RedisClaims implements ReplicaClaims {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // One retry at most: a claim while Redis is away fails soon and is tried next sweep.
    this.redis = connectRedis(url, { lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: 1 });
    this.redis.on('error', () => undefined);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${this.prefix}:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
