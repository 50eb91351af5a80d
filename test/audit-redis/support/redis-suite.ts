import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { RedisAuditLog } from '../../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../../env/redis-server.js';

/**
 * A real redis-server for one test file, an admin client (what someone with redis-cli
 * can do to the log), and the logs a test opened, closed after the file.
 */
export function useRedisSuite() {
  let server: RedisServer | undefined;
  let admin: Redis | undefined;
  const opened: RedisAuditLog[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    // Tests stop Redis on purpose: the admin client's reconnect errors are expected, not printed.
    admin.on('error', () => undefined);
  });
  afterAll(async () => {
    for (const log of opened) await log.close();
    admin?.disconnect();
    await server?.dispose();
  });
  return {
    url: () => server!.url,
    /** The redis-server itself: to stop, restart or pause it. */
    server: () => server!,
    admin: () => admin!,
    /** Closes the log after the file. */
    track: (log: RedisAuditLog) => {
      opened.push(log);
      return log;
    },
  };
}
