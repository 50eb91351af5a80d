import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryMcpSessions,
  RedisMcpSessions,
  type McpSessionRecord,
  type McpSessions,
  type McpSessionsOptions,
} from '../../src/mcp/sessions/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';

let redis: RedisServer;
let prefix = 0;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.dispose();
});

const clock = () => new Date();

/** Three replicas' views of one store: one object in memory, three clients of one Redis. */
const STORES: Array<[string, (options: McpSessionsOptions) => McpSessions[]]> = [
  [
    'MemoryMcpSessions',
    (options) => {
      const sessions = new MemoryMcpSessions(options, clock);
      return [sessions, sessions, sessions];
    },
  ],
  [
    'RedisMcpSessions',
    (options) => {
      const keyPrefix = `mcp-sessions-test-${prefix++}:`;
      return [0, 1, 2].map(
        () => new RedisMcpSessions({ ...options, url: redis.url, keyPrefix, timeoutMs: 2_000 }, clock),
      );
    },
  ],
];

const record = (principal: string): McpSessionRecord => ({
  server: 'notes',
  principal,
  actor: { id: 'agent-001', type: 'ai-agent' },
  openedAt: '2026-11-29T09:00:00.000Z',
});

async function using<T>(stores: McpSessions[], body: (stores: McpSessions[]) => Promise<T>): Promise<T> {
  try {
    return await body(stores);
  } finally {
    await Promise.all([...new Set(stores)].map((s) => s.close()));
  }
}

describe.each(STORES)('%s', (_, open) => {
  it('finds a session opened on one replica from every other, until it is ended', () =>
    using(open({ idleMs: 60_000, maxSessions: 10 }), async ([a, b, c]) => {
      expect(await a!.open('s-1', record('agent-001'))).toBe(true);
      expect(await b!.use('s-1')).toEqual(record('agent-001'));
      expect(await c!.use('s-2')).toBeUndefined();
      await c!.end('s-1');
      expect(await a!.use('s-1')).toBeUndefined();
      expect(await b!.use('s-1')).toBeUndefined();
    }));

  it('opens at most maxSessions across replicas opening at once, and one more once one ends', () =>
    using(open({ idleMs: 60_000, maxSessions: 3 }), async (stores) => {
      const opened = await Promise.all(
        Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.open(`s-${i}`, record('agent-001'))),
      );
      expect(opened.filter(Boolean)).toHaveLength(3);
      const first = opened.indexOf(true);
      await stores[1]!.end(`s-${first}`);
      expect(await stores[2]!.open('s-late', record('agent-001'))).toBe(true);
      expect(await stores[0]!.open('s-later', record('agent-001'))).toBe(false);
    }));

  it('ends a session unused for idleMs, and keeps one that is used', () =>
    using(open({ idleMs: 1_500, maxSessions: 1 }), async ([a, b]) => {
      expect(await a!.open('s-used', record('agent-001'))).toBe(true);
      // Used every 500 ms for longer than idleMs: kept (a loaded machine has 1 s of slack).
      for (let i = 0; i < 4; i++) {
        await sleep(500);
        expect(await b!.use('s-used')).toBeDefined();
      }
      await sleep(1_700);
      expect(await a!.use('s-used')).toBeUndefined();
      // Ended, it no longer counts.
      expect(await b!.open('s-next', record('agent-001'))).toBe(true);
    }));
});

describe('RedisMcpSessions', () => {
  it('refuses (UNAVAILABLE) while Redis cannot be reached', async () => {
    const sessions = new RedisMcpSessions(
      { url: 'redis://127.0.0.1:1', timeoutMs: 300, idleMs: 1000, maxSessions: 1 },
      clock,
    );
    try {
      const unavailable = {
        code: 'UNAVAILABLE',
        message:
          'the store of MCP sessions (Redis) is unavailable, so no MCP session can be opened or used now',
      };
      await expect(sessions.open('s-1', record('agent-001'))).rejects.toMatchObject(unavailable);
      await expect(sessions.use('s-1')).rejects.toMatchObject(unavailable);
    } finally {
      await sessions.close();
    }
  });
});
