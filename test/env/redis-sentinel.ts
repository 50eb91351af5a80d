import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-ports.js';
import { neverOutlive } from './managed-process.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

export const REDIS_SENTINEL_BIN = '/usr/bin/redis-sentinel';
const MASTER_NAME = 'arbiter';

/**
 * A primary, two replicas and three sentinels (Debian's redis-server and redis-sentinel)
 * on loopback: what production Redis with Sentinel looks like, small enough for a test.
 */
export interface SentinelCluster {
  /** redis+sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/arbiter */
  readonly url: string;
  readonly masterName: string;
  /** Every data node, the first the primary at start. */
  readonly servers: readonly RedisServer[];
  /** The node the sentinels name as primary now. */
  primary(): Promise<RedisServer>;
  /** Resolves once the sentinels name another primary than `port` (after a failover). */
  waitForFailover(fromPort: number, timeoutMs?: number): Promise<RedisServer>;
  dispose(): Promise<void>;
}

export async function startSentinelCluster(): Promise<SentinelCluster> {
  const primary = await startRedisServer();
  const replicas = await Promise.all(
    [0, 1].map(() => startRedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] })),
  );
  const servers = [primary, ...replicas];
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-sentinel-'));
  const sentinels: Array<{ port: number; proc: ChildProcess }> = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const conf = join(dir, `sentinel-${i}.conf`);
    // Sentinel rewrites its configuration file: each has its own, writable.
    await writeFile(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'daemonize no',
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    const proc = spawn(REDIS_SENTINEL_BIN, [conf], { stdio: 'ignore' });
    neverOutlive(proc);
    sentinels.push({ port, proc });
  }
  const ask = async <T>(question: (client: Redis) => Promise<T>): Promise<T | undefined> => {
    for (const { port } of sentinels) {
      const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return await question(client);
      } catch {
        // this sentinel is not up (yet): ask the next
      } finally {
        client.disconnect();
      }
    }
    return undefined;
  };
  const primaryPort = async () =>
    ask(async (c) =>
      Number(((await c.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as string[])[1]),
    );
  const nodeOn = (port: number | undefined) => servers.find((s) => s.port === port);
  const until = async <T>(
    what: string,
    timeoutMs: number,
    probe: () => Promise<T | undefined>,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`Sentinel cluster: ${what} within ${timeoutMs} ms`);
  };
  // Ready: both replicas in sync, and every sentinel sees them and the other sentinels.
  await until('replicas in sync', 20_000, async () => {
    const info = await Promise.all(replicas.map((r) => infoOf(r.port)));
    return info.every((i) => i.includes('master_link_status:up')) ? true : undefined;
  });
  await until('sentinels that know the replicas and each other', 30_000, async () => {
    const views = await Promise.all(
      sentinels.map(async ({ port }) => {
        const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          const master = (await client.call('SENTINEL', 'master', MASTER_NAME)) as string[];
          const field = (name: string) => Number(master[master.indexOf(name) + 1]);
          return field('num-slaves') === 2 && field('num-other-sentinels') === 2;
        } finally {
          client.disconnect();
        }
      }),
    );
    return views.every(Boolean) ? true : undefined;
  });
  return {
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${MASTER_NAME}`,
    masterName: MASTER_NAME,
    servers,
    primary: async () => {
      const node = nodeOn(await primaryPort());
      if (!node) throw new Error('the sentinels name no primary of this cluster');
      return node;
    },
    waitForFailover: (fromPort, timeoutMs = 30_000) =>
      until('a new primary', timeoutMs, async () => {
        const port = await primaryPort();
        return port !== fromPort ? nodeOn(port) : undefined;
      }),
    dispose: async () => {
      for (const { proc } of sentinels) proc.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.dispose()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function infoOf(port: number): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.info('replication');
  } finally {
    client.disconnect();
  }
}
