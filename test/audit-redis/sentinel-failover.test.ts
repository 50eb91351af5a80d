import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelCluster, type SentinelCluster } from '../env/redis-sentinel.js';
import { call, KEYS, removeDir, startArbiter, type ArbiterProcess } from '../support/arbiter-process.js';

const run = promisify(execFile);
let cluster: SentinelCluster;
let arbiter: ArbiterProcess;

beforeAll(async () => {
  cluster = await startSentinelCluster();
  arbiter = await startArbiter({
    args: ['--redis', cluster.url, '--redis-wait-replicas', '1', '--redis-timeout', '1000'],
  });
}, 90_000);
afterAll(async () => {
  await arbiter?.stop();
  await cluster?.dispose();
  if (arbiter) {
    await removeDir(arbiter.dataDir);
    await removeDir(arbiter.manifestsDir);
  }
});

/** Proposals from `workers` callers at once until stopped: what each answer was. */
function proposeUnderLoad(workers: number) {
  const acknowledged: string[] = [];
  const statuses = new Map<number, number>();
  let running = true;
  const worker = async () => {
    while (running) {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: { capability: 'database.write', parameters: { database: 'staging', statement: 'x' } },
        },
        timeoutMs: 10_000,
      }).catch(() => ({ status: 0, body: undefined }));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) acknowledged.push(res.body.decision_id as string);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  return {
    acknowledged,
    statuses,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const until = async (what: string, condition: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('the Redis audit log through Sentinel', () => {
  it('fails over under load: 503 while no primary is reachable, then resumes; with WAIT 1 no acknowledged decision is lost', async () => {
    const load = proposeUnderLoad(4);
    await until('decisions acknowledged before the failover', () => load.acknowledged.length >= 50);
    const primary = await cluster.primary();
    await primary.kill9();
    const acknowledgedBefore = load.acknowledged.length;
    await cluster.waitForFailover(primary.port);
    // Resumes by itself on the new primary.
    await until(
      'decisions acknowledged by the new primary',
      () => load.acknowledged.length >= acknowledgedBefore + 50,
    );
    await load.stop();

    // Only 200 (stored) or 503 (no primary): never another answer, never a dropped request.
    expect([...load.statuses.keys()].sort()).toEqual([200, 503]);
    const exported = await call(arbiter.url, 'GET', '/api/v1/audit/export', { key: KEYS.auditor });
    expect(exported.status).toBe(200);
    const stored = new Set(
      (exported.body as string)
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { decision_id: string | null }).decision_id),
    );
    const lost = load.acknowledged.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    // A loaded machine may still be settling on the new primary: 503 until it is, then a sound chain.
    let verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    for (let tries = 0; verify.status === 503 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    }
    expect(verify.body).toMatchObject({ ok: true });
    expect(verify.body.entries_checked).toBeGreaterThanOrEqual(load.acknowledged.length);
  }, 120_000);
});

describe('the Redis audit log through Sentinel, without WAIT', () => {
  let lossy: SentinelCluster;
  let replica: ArbiterProcess;

  beforeAll(async () => {
    lossy = await startSentinelCluster();
    replica = await startArbiter({ args: ['--redis', lossy.url, '--redis-timeout', '1000'] });
  }, 90_000);
  afterAll(async () => {
    await replica?.stop();
    await lossy?.dispose();
    if (replica) {
      await removeDir(replica.dataDir);
      await removeDir(replica.manifestsDir);
    }
  });

  const proposeOnce = () =>
    call(replica.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'database.write', parameters: { database: 'staging', statement: 'y' } },
      },
      timeoutMs: 10_000,
    });

  it('says so when a failover loses acknowledged entries: log, metric, readiness, an audit entry and /audit/verify', async () => {
    for (let i = 0; i < 10; i++) expect((await proposeOnce()).status).toBe(200);
    // The replicas stop replicating (paused, and cut off: nothing more reaches even their
    // socket buffers); what the primary acknowledges now exists only there.
    const [primary, ...replicas] = lossy.servers;
    for (const r of replicas) r.pause();
    await run('redis-cli', ['-p', String(primary!.port), 'CLIENT', 'KILL', 'TYPE', 'replica']);
    const doomed: Array<{ decision_id: string; audit_ref: string }> = [];
    for (let i = 0; i < 5; i++) {
      const res = await proposeOnce();
      expect(res.status).toBe(200);
      doomed.push(res.body);
    }
    const before = await call(replica.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    const storedHead = before.body.head.seq as number;
    await primary!.kill9();
    for (const r of replicas) r.resume();
    await lossy.waitForFailover(primary!.port);
    // Resumes on the new primary; the first append finds the head went back.
    let resumed = false;
    for (let i = 0; i < 200 && !resumed; i++) {
      resumed = (await proposeOnce()).status === 200;
      if (!resumed) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(resumed).toBe(true);

    const verify = await call(replica.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    expect(verify.body.ok).toBe(true);
    expect(verify.body.rollbacks).toEqual([
      expect.objectContaining({ lost_from_seq: storedHead - 4, lost_to_seq: storedHead }),
    ]);
    const lost = verify.body.rollbacks[0];
    expect(lost.found_head.seq).toBe(storedHead - 5);
    const recorded = await call(replica.url, 'GET', '/api/v1/audit/log?event_type=audit.rollback_detected', {
      key: KEYS.auditor,
    });
    expect(recorded.body.entries).toHaveLength(1);
    expect(replica.logs.join('\n')).toContain(
      `audit entries ${storedHead - 4}..${storedHead} were stored and are gone from Redis`,
    );
    const metrics = await fetch(`${replica.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^arbiter_audit_rollback_detected 1$/m);
    const ready = await call(replica.url, 'GET', '/readyz');
    expect(ready.body.checks).toContainEqual(
      expect.objectContaining({
        name: 'audit',
        message: expect.stringContaining(`${storedHead - 4}..${storedHead} were lost`),
      }),
    );
    // The lost decisions are gone indeed: the report is the only trace.
    const exported = await call(replica.url, 'GET', '/api/v1/audit/export', { key: KEYS.auditor });
    for (const d of doomed) expect(exported.body).not.toContain(d.audit_ref);
  }, 120_000);
});
