import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

let redis: RedisServer;
let arbiter: ArbiterProcess;
const proposeTo = (url: string, capability = 'database.query', parameters: object = { query: 'q' }) =>
  call(url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
  });
const propose = () => proposeTo(arbiter.url);

interface TwoReplicas {
  a: ArbiterProcess;
  b: ArbiterProcess;
  shared: RedisServer;
}

/** Two servers on one fresh Redis, with the example manifests (edited first by `edit`). */
async function withTwoReplicas(
  extraArgs: string[],
  test: (replicas: TwoReplicas) => Promise<void>,
  edit: (manifestsDir: string) => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const manifestsDir = await tempManifests();
  await edit(manifestsDir);
  const shared = await startRedisServer();
  const args = ['--redis', `${shared.url}/0`, ...extraArgs];
  const a = await startArbiter({ manifestsDir, args });
  const b = await startArbiter({ manifestsDir, args });
  try {
    await test({ a, b, shared });
  } finally {
    await a.stop();
    await b.stop();
    await shared.dispose();
    for (const dir of [a.dataDir, b.dataDir, manifestsDir]) await removeDir(dir);
  }
}

beforeAll(async () => {
  redis = await startRedisServer();
  arbiter = await startArbiter({ args: ['--redis', `${redis.url}/0`, '--redis-timeout', '500'] });
});
afterAll(async () => {
  await arbiter.stop();
  await redis.dispose();
  await removeDir(arbiter.dataDir);
  await removeDir(arbiter.manifestsDir);
});

describe('serve --redis', () => {
  it('stores decisions in the Redis stream and serves the audit API from it', async () => {
    const decision = await propose();
    expect(decision.status).toBe(200);
    const entries = await call(
      arbiter.url,
      'GET',
      `/api/v1/audit/log?decision_id=${decision.body.decision_id}`,
      { key: KEYS.auditor },
    );
    expect(entries.body.entries[0].id).toBe(decision.body.audit_ref);
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${decision.body.decision_id}`, {
      key: KEYS.auditor,
    });
    expect(trail.body.integrity.chain_verified).toBe(true);
  });

  it('fails closed with 503 while Redis is down, and continues the same chain when it returns', async () => {
    await redis.kill9();
    const down = await propose();
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'UNAVAILABLE', request_id: expect.any(String) });
    await redis.restart();
    // Bounded wait until it has reconnected.
    const back = await vi.waitFor(
      async () => {
        const res = await propose();
        expect(res.status).toBe(200);
        return res;
      },
      { timeout: 15_000, interval: 250 },
    );
    const verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    expect(verify.body.ok).toBe(true);
    const stored = await call(arbiter.url, 'GET', `/api/v1/audit/log?decision_id=${back.body.decision_id}`, {
      key: KEYS.auditor,
    });
    expect(stored.body.total).toBe(1);
  });
});

describe('grant rate limits with --redis', () => {
  it('are shared by replicas: two servers on one Redis admit maxRequests in total', async () => {
    const limitToThree = async (manifestsDir: string) => {
      const grants = join(manifestsDir, 'grants.yaml');
      await writeFile(grants, (await readFile(grants, 'utf8')).replace('maxRequests: 100', 'maxRequests: 3'));
    };
    await withTwoReplicas(
      [],
      async ({ a, b, shared }) => {
        const outcomes: string[] = [];
        for (const server of [a, b, a, b, a]) outcomes.push((await proposeTo(server.url)).body.outcome);
        expect(outcomes).toEqual(['ALLOW', 'ALLOW', 'ALLOW', 'DENY', 'DENY']);
        await shared.kill9();
        expect((await proposeTo(b.url)).status).toBe(503);
      },
      limitToThree,
    );
  }, 60_000);
});

describe('pending decisions with --redis', () => {
  it('two replicas on one Redis: one lists what the other decided, and each expiry is written once', async () => {
    await withTwoReplicas(['--pending-ttl', '3'], async ({ a, b }) => {
      const proposed = await proposeTo(a.url, 'deploy.production', { service: 'web', version: '9' });
      const id = proposed.body.decision_id as string;
      const pendingOn = async (url: string) =>
        (await call(url, 'GET', '/api/v1/governance/pending', { key: KEYS.reviewer })).body.decisions.map(
          (d: { decision_id: string }) => d.decision_id,
        );
      // b learns of it from the stream: its pending list shows it.
      await expect.poll(() => pendingOn(b.url), { timeout: 10_000 }).toContain(id);
      // Both run an expiry sweeper (embedded mode has no Lease): the claim lets one write.
      // (Both sweeping in the same millisecond is rare here; pending-reviews.test.ts forces it.)
      const expiries = async () =>
        (
          await call(a.url, 'GET', `/api/v1/audit/log?decision_id=${id}&event_type=governance.review`, {
            key: KEYS.auditor,
          })
        ).body.entries.length as number;
      await expect.poll(expiries, { timeout: 15_000, interval: 250 }).toBe(1);
      // Once neither replica holds it as pending, no sweeper will try again: still one.
      for (const url of [a.url, b.url]) {
        await expect.poll(() => pendingOn(url), { timeout: 10_000 }).not.toContain(id);
      }
      expect(await expiries()).toBe(1);
    });
  }, 60_000);
});
