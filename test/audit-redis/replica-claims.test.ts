import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisClaims } from '../../src/redis/replica-claims.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.dispose();
});

describe('RedisClaims', () => {
  it('grants a key to one of several replicas at once, and again once the claim lapses', async () => {
    const replicas = [0, 1, 2, 3].map(() => new RedisClaims(redis.url, 'claims-test'));
    try {
      const first = await Promise.all(replicas.map((r) => r.claim('expiry:d-1', 300)));
      expect(first.filter(Boolean)).toHaveLength(1);
      // Another key is claimed independently.
      expect(await replicas[1]!.claim('expiry:d-2', 300)).toBe(true);
      expect(await replicas[0]!.claim('expiry:d-1', 300)).toBe(false);
      // Waits on Redis's clock, not ours: polled until the key has expired.
      await expect
        .poll(() => replicas[2]!.claim('expiry:d-1', 60_000), { timeout: 5_000, interval: 100 })
        .toBe(true);
      expect(await replicas[3]!.claim('expiry:d-1', 60_000)).toBe(false);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it('fails (the sweep retries) rather than claiming while Redis is away', async () => {
    const claims = new RedisClaims('redis://127.0.0.1:1', 'claims-test');
    try {
      await expect(claims.claim('expiry:d-3', 1_000)).rejects.toThrow();
    } finally {
      await claims.close();
    }
  });
});
