import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../src/rate-limit/redis-rate-limiter.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.dispose();
});

const request = { key: 'agent-1|db.query', maxRequests: 2, windowSeconds: 60 };

describe('RedisRateLimiter', () => {
  it('admits on a connection still being made (the first proposal after start)', async () => {
    const limiter = new RedisRateLimiter({ url: redis.url, timeoutMs: 2_000, keyPrefix: 'connect-test:' });
    try {
      // Called at once: the connection is not up yet.
      expect(await limiter.admit(request)).toEqual({ admitted: true, remaining: 1 });
      expect(await limiter.admit(request)).toEqual({ admitted: true, remaining: 0 });
      expect(await limiter.admit(request)).toEqual({ admitted: false, remaining: 0 });
    } finally {
      await limiter.close();
    }
  });

  it('peeks without counting: a dry run spends no budget', async () => {
    const limiter = new RedisRateLimiter({ url: redis.url, timeoutMs: 2_000, keyPrefix: 'peek-test:' });
    try {
      for (let i = 0; i < 3; i++)
        expect(await limiter.peek(request)).toEqual({ admitted: true, remaining: 1 });
      expect(await limiter.admit(request)).toEqual({ admitted: true, remaining: 1 });
      expect(await limiter.peek(request)).toEqual({ admitted: true, remaining: 0 });
      expect(await limiter.admit(request)).toEqual({ admitted: true, remaining: 0 });
      expect(await limiter.peek(request)).toEqual({ admitted: false, remaining: 0 });
      expect(await limiter.admit(request)).toEqual({ admitted: false, remaining: 0 });
    } finally {
      await limiter.close();
    }
  });

  it('counts only admitted requests, and its window slides by the Redis clock', async () => {
    const limiter = new RedisRateLimiter({ url: redis.url, timeoutMs: 2_000, keyPrefix: 'slide-test:' });
    const limit = { key: 'agent-1|db.write', maxRequests: 2, windowSeconds: 3 };
    try {
      expect((await limiter.admit(limit)).admitted).toBe(true);
      const firstAt = Date.now();
      // Letting time pass is the point here: the second admission half a window after the
      // first, so that they leave the window apart, each step with half a window to spare.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await limiter.admit(limit)).admitted).toBe(true);
      // Refusals while full: were they counted, the window would stay full long after.
      for (let i = 0; i < 20; i++) expect((await limiter.admit(limit)).admitted).toBe(false);
      // Wait for the first admission to leave the window (bounded; no timing is asserted).
      let admitted = false;
      while (!admitted && Date.now() - firstAt < 8_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        admitted = (await limiter.admit(limit)).admitted;
      }
      expect(admitted).toBe(true);
      // It slid by one slot only: the second admission is still in the window, so it is full again.
      expect((await limiter.admit(limit)).admitted).toBe(false);
    } finally {
      await limiter.close();
    }
  });

  it('fails closed when Redis refuses the connection', async () => {
    const limiter = new RedisRateLimiter({ url: 'redis://127.0.0.1:1', timeoutMs: 300 });
    try {
      await expect(limiter.admit(request)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      await limiter.close();
    }
  });

  it('fails closed within its bound when Redis never answers', async () => {
    // Accepts connections and stays silent: no error ever comes, only the bound ends the
    // wait (without it the test would time out).
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    try {
      await expect(limiter.admit(request)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      await limiter.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
