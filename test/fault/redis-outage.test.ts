import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_KEY_PREFIX, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { call, KEYS, removeDir, startArbiter, type ArbiterProcess } from '../support/arbiter-process.js';

const PROPOSALS = [
  { capability: 'payments.transfer', parameters: { amount: 250, currency: 'USD', to: 'acct-7' } },
  { capability: 'payments.transfer', parameters: { amount: 50_000, currency: 'USD', to: 'acct-9' } },
  { capability: 'database.write', parameters: { database: 'staging', statement: 'update t set x = 1' } },
  { capability: 'deploy.production', parameters: { service: 'web', version: '1.2.3' } },
];

interface Answer {
  client: number;
  status: number;
  body: any;
}

/** Proposes in a loop from `clients` concurrent clients until stop() is called. */
function loadGenerator(url: string, clients: number) {
  const answers: Answer[] = [];
  let running = true;
  const client = async (c: number) => {
    for (let i = c; running; i += clients) {
      const { capability, parameters } = PROPOSALS[i % PROPOSALS.length]!;
      try {
        const res = await call(url, 'POST', '/api/v1/governance/propose', {
          key: KEYS.agent,
          body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
        });
        answers.push({ client: c, status: res.status, body: res.body });
      } catch (err) {
        answers.push({ client: c, status: 0, body: String(err) });
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return {
    answers,
    async stop() {
      running = false;
      await done;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, probe: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Redis SIGKILLed and restarted under load, end to end through `arbiter serve --redis`:
 * the API fails closed (503) while Redis is away, every 200 has its entry, and the chain
 * verifies afterwards. (test/audit-redis/outage.test.ts covers the backend alone.)
 */
describe('fault: Redis killed and restarted under load', () => {
  let redis: RedisServer;
  let arbiter: ArbiterProcess;
  let reader: Redis;
  const keys = new RedisAuditKeys(DEFAULT_KEY_PREFIX);

  beforeAll(async () => {
    redis = await startRedisServer({ appendfsync: 'always' });
    arbiter = await startArbiter({
      args: [
        '--redis',
        redis.url,
        '--redis-timeout',
        '1000',
        '--key-rate-limit',
        '100000',
        '--key-burst',
        '100000',
      ],
    });
  });
  afterAll(async () => {
    reader?.disconnect();
    if (arbiter?.child) {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
      await removeDir(arbiter.manifestsDir);
    }
    await redis?.dispose();
  });

  it('answers 503 while Redis is down, never a 200 without its entry, and the chain verifies', async () => {
    const load = loadGenerator(arbiter.url, 8);
    await until('decisions under load', () => load.answers.filter((a) => a.status === 200).length >= 100);
    await redis.kill9();
    const killedAt = load.answers.length;
    // Redis stays down until every client has been refused: the requests in flight at the
    // kill have all been answered, and the load has run into the outage.
    await until(
      'every client refused while Redis is down',
      () =>
        new Set(load.answers.slice(killedAt).flatMap((a) => (a.status === 503 ? [a.client] : []))).size === 8,
    );
    // While down: a probe of our own fails closed too.
    const probe = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: PROPOSALS[0] },
    });
    expect(probe.status).toBe(503);
    expect(probe.body.error.code).toBe('UNAVAILABLE');
    expect(probe.body.decision_id).toBeUndefined();
    await redis.restart();
    const restartedAt = load.answers.length;
    await until(
      'decisions after the restart',
      () => load.answers.slice(restartedAt).filter((a) => a.status === 200).length >= 100,
    );
    await load.stop();

    const statuses = new Map<number, number>();
    for (const a of load.answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    // Only decisions and fail-closed refusals: no other 5xx, no dropped connections.
    expect([...statuses.keys()].sort()).toEqual([200, 503]);
    for (const a of load.answers.filter((x) => x.status === 503)) {
      expect(a.body.error.code).toBe('UNAVAILABLE');
      expect(a.body.decision_id).toBeUndefined();
    }

    // Every acknowledged decision has its entry, at the audit_ref it was given, with its outcome.
    reader = new Redis(redis.url);
    const acknowledged = load.answers.filter((a) => a.status === 200).map((a) => a.body);
    const pipeline = reader.pipeline();
    for (const d of acknowledged) pipeline.hget(keys.ids, d.audit_ref);
    const seqs = (await pipeline.exec())!.map(([err, seq]) => (err ? null : (seq as string | null)));
    const missing = acknowledged.filter((_, i) => seqs[i] === null);
    expect(missing.map((d) => d.decision_id)).toEqual([]);
    const stored = await Promise.all(
      seqs.map(async (seq) => {
        const items = await reader.xrange(keys.stream, `${seq}-0`, `${seq}-0`);
        return JSON.parse(items[0]![1][1]!);
      }),
    );
    stored.forEach((entry, i) => {
      expect(entry.decision_id).toBe(acknowledged[i].decision_id);
      expect(entry.outcome).toBe(acknowledged[i].outcome);
    });

    const verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    expect(verify.status).toBe(200);
    expect(verify.body.ok, JSON.stringify(verify.body)).toBe(true);
    const head = Number(await reader.hget(keys.head, 'seq'));
    expect(head).toBeGreaterThanOrEqual(acknowledged.length);
    // Anything beyond the acknowledged decisions is an in-doubt batch or a config event, never a gap.
    expect(Number(await reader.xlen(keys.stream))).toBe(head);
  }, 90_000);
});
