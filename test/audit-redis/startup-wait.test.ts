import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import {
  call,
  CLI,
  EXAMPLE_MANIFESTS,
  KEYS,
  removeDir,
  serveArgs,
  tempDir,
} from '../support/arbiter-process.js';
import { freePort } from '../env/free-ports.js';

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const PROPOSAL = {
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability: 'database.query', parameters: { query: 'select 1', database: 'staging' } },
};

describe('arbiter serve --redis with Redis not reachable yet', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('stays up answering not ready and 503, then serves once Redis comes', async () => {
    const redis: RedisServer = await startRedisServer();
    cleanups.push(() => redis.dispose());
    await redis.stop();
    const dataDir = await tempDir();
    cleanups.push(() => removeDir(dataDir));
    const port = await freePort();
    const args = serveArgs({ dataDir, manifestsDir: EXAMPLE_MANIFESTS, port, args: ['--redis', redis.url] });
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let retries = 0;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('Redis audit log unreachable: not ready, retrying')) retries += 1;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    const base = `http://127.0.0.1:${port}`;

    const alive = await until('/healthz', 15_000, async () => {
      const res = await call(base, 'GET', '/healthz');
      return res.status === 200 ? res : undefined;
    });
    expect(alive.body).toMatchObject({ status: 'ok' });
    // After a few failed attempts against the closed port it must neither exit nor turn ready.
    await until('three failed attempts', 15_000, () => Promise.resolve(retries >= 3 ? true : undefined));
    expect(child.exitCode).toBeNull();
    const notReady = await call(base, 'GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks[0].message).toMatch(/waiting for the Redis audit log/);
    const refused = await call(base, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: PROPOSAL,
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/^starting: /),
    });

    await redis.restart();
    await until('/readyz 200', 20_000, async () =>
      (await call(base, 'GET', '/readyz')).status === 200 ? true : undefined,
    );
    const decided = await call(base, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: PROPOSAL,
    });
    expect(decided.status).toBe(200);
    const trail = await call(base, 'GET', `/api/v1/audit/log/${decided.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.status).toBe(200);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
