import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { ArbiterError } from '../model/index.js';
import { connectRedis } from './redis-connection.js';

export interface RequestPathRedisOptions {
  url: string;
  /** What every key of the store begins with. */
  keyPrefix: string;
  /** Bound on one call; past it the request fails closed (503). */
  timeoutMs: number;
}

/**
 * A Redis client for a store a request waits on (rate limits, one-time uses): nothing is
 * queued while disconnected and nothing is resent, each call is bounded by `timeoutMs`,
 * and any failure rejects with UNAVAILABLE and `unavailable` as its message, so that the
 * request fails closed.
 */
export class RequestPathRedis {
  private readonly redis: Redis;
  private readonly timeoutMs: number;
  private readonly keyPrefix: string;

  constructor(
    { url, keyPrefix, timeoutMs }: RequestPathRedisOptions,
    private readonly unavailable: string,
  ) {
    this.timeoutMs = timeoutMs;
    this.keyPrefix = keyPrefix;
    this.redis = connectRedis(url, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
    });
    this.redis.on('error', () => undefined);
    // Each call waiting for the connection listens for it: as many as requests in flight.
    this.redis.setMaxListeners(0);
  }

  /** The Redis key of the store's `name`. */
  key(name: string): string {
    return this.keyPrefix + name;
  }

  async run<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    try {
      // A connection still being made (just started, or reconnecting) is waited for within
      // the bound, rather than failing every call until it is up.
      if (this.redis.status !== 'ready')
        await once(this.redis, 'ready', { signal: AbortSignal.timeout(this.timeoutMs) });
      return await command(this.redis);
    } catch (err) {
      throw new ArbiterError('UNAVAILABLE', this.unavailable, undefined, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
