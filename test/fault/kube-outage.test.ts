import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { KINDS } from '../../src/model/index.js';
import { call, KEYS, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  PLURAL,
  eventually,
  installControllerRbac,
  object,
  startController,
} from '../operator/support/operator-env.js';

/**
 * Each proposal's client gives up after this long; an answer must come well within it.
 * Both are hang detectors, not speed targets (bench/ measures the latency).
 */
const CLIENT_TIMEOUT_MS = 10_000;
const HANG_MS = 5_000;

interface Answer {
  status: number;
  outcome: string | undefined;
  ms: number;
  at: number;
}

/** Proposes files.read for agent-7 from `clients` concurrent clients until stopped. */
function loadGenerator(url: string, clients: number) {
  const answers: Answer[] = [];
  let running = true;
  const client = async () => {
    while (running) {
      const started = Date.now();
      const res = await call(url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.admin,
        body: {
          actor: { id: 'agent-7', type: 'automation' },
          action: { capability: 'files.read', parameters: {} },
        },
        timeoutMs: CLIENT_TIMEOUT_MS,
      }).catch(() => ({ status: 0, body: undefined }));
      answers.push({
        status: res.status,
        outcome: res.body?.outcome,
        ms: Date.now() - started,
        at: Date.now(),
      });
      // Under the per-key limit (200/s) that startController leaves at its default.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const done = Promise.all(Array.from({ length: clients }, () => client()));
  return {
    answers,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Sample values of a metric, by its label set, from the Prometheus text format. */
async function metric(url: string, name: string): Promise<Map<string, number>> {
  const res = await fetch(`${url}/metrics`);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const match = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (match) out.set(match[1] ?? '', Number(match[2]));
  }
  return out;
}

/**
 * kube-apiserver stopped and started again while proposals keep coming: none fails or
 * stalls, readiness and metrics name the broken watches, and a change made once the
 * server is back reaches the decisions under load. (test/operator/controller.test.ts
 * covers the restart with single proposals and writes refused during the outage.)
 */
describeWithControlPlane('fault: kube-apiserver outage under load', (controlPlane) => {
  let arbiter: ArbiterProcess;
  const kube = (method: string, path: string, body?: unknown) =>
    controlPlane().request<any>(method, path, body === undefined ? {} : { body });
  const create = async (kind: string, name: string, spec: unknown) => {
    const res = await kube('POST', `${API_BASE}/${PLURAL[kind]}`, object(kind, name, spec));
    expect(res.status, res.text).toBe(201);
  };

  beforeAll(async () => {
    await installCrds(controlPlane());
    const kubeconfig = await installControllerRbac(controlPlane());
    await create('Capability', 'files-read', { name: 'files.read', riskLevel: 'low' });
    await create('ActorGrant', 'agent-7', {
      actor: { id: 'agent-7' },
      grants: [{ capability: 'files.read' }],
    });
    arbiter = await startController({ kubeconfig, identity: 'fault-a' });
  });
  afterAll(async () => {
    if (!arbiter) return;
    await arbiter.stop();
    await removeDir(arbiter.dataDir);
  });

  it('keeps deciding from the last index, says so in readiness and metrics, and resyncs', async () => {
    await eventually(
      'ALLOW from the synced index',
      async () => {
        const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
          key: KEYS.admin,
          body: {
            actor: { id: 'agent-7', type: 'automation' },
            action: { capability: 'files.read', parameters: {} },
          },
        });
        return res.body?.outcome === 'ALLOW' ? true : undefined;
      },
      15_000,
    );
    const restartsBefore = await metric(arbiter.url, 'arbiter_watch_restarts_total');
    const load = loadGenerator(arbiter.url, 4);
    const answersSince = (from: number) => load.answers.filter((a) => a.at > from).length;
    try {
      await eventually('decisions under load before the outage', () =>
        Promise.resolve(load.answers.length >= 20 ? true : undefined),
      );
      await controlPlane().stopApiServer();
      const broken = await eventually('readiness naming the broken watches', async () => {
        const ready = await call(arbiter.url, 'GET', '/readyz');
        const check = ready.body.checks?.find((c: { name: string }) => c.name === 'kubernetes');
        return ready.status === 200 && /watch broken/.test(check?.message ?? '') ? check.message : undefined;
      });
      expect(broken.value).toMatch(/serving the last good index/);
      const gauges = await eventually('arbiter_watch_broken for every kind', async () => {
        const values = await metric(arbiter.url, 'arbiter_watch_broken');
        return KINDS.every((k) => values.get(`{kind="${k}"}`) === 1) ? values : undefined;
      });
      expect(gauges.value.size).toBe(KINDS.length);
      // Decisions flow through the outage from the last index (all of them 200, checked below).
      const brokenSince = Date.now();
      await eventually('decisions under load while every watch is broken', () =>
        Promise.resolve(answersSince(brokenSince) > 20 ? true : undefined),
      );
    } finally {
      await controlPlane().startApiServer();
    }
    // Back: the watches recover, readiness and metrics say so, and the restarts were counted.
    await eventually(
      'watches restored',
      async () => {
        const values = await metric(arbiter.url, 'arbiter_watch_broken');
        const ready = await call(arbiter.url, 'GET', '/readyz');
        const check = ready.body.checks?.find((c: { name: string }) => c.name === 'kubernetes');
        return [...values.values()].every((v) => v === 0) && /^synced/.test(check?.message ?? '')
          ? true
          : undefined;
      },
      45_000,
    );
    const restartsAfter = await metric(arbiter.url, 'arbiter_watch_restarts_total');
    for (const kind of KINDS) {
      const key = `{kind="${kind}"}`;
      expect(restartsAfter.get(key) ?? 0, kind).toBeGreaterThan(restartsBefore.get(key) ?? 0);
    }
    // The index resyncs: a policy created now reaches the decisions under load, for good.
    // (Answers that came back before the create was sent must all be ALLOW.)
    const createdAt = Date.now();
    await create('Policy', 'no-files', { rules: [{ capability: 'files.read', outcome: 'DENY' }] });
    const { value: deniedAt } = await eventually(
      'DENY under load',
      () => Promise.resolve(load.answers.at(-1)?.outcome === 'DENY' ? Date.now() : undefined),
      15_000,
    );
    await eventually('more decisions after the first DENY', () =>
      Promise.resolve(answersSince(deniedAt) >= 20 ? true : undefined),
    );
    await load.stop();

    expect(load.answers.filter((a) => a.status !== 200)).toEqual([]);
    const beforeChange = load.answers.filter((a) => a.at < createdAt);
    expect(beforeChange.every((a) => a.outcome === 'ALLOW')).toBe(true);
    const firstDeny = load.answers.findIndex((a) => a.outcome === 'DENY');
    expect(load.answers.slice(firstDeny).every((a) => a.outcome === 'DENY')).toBe(true);
    // No proposal stalled, during the outage or after it: answering never waits on Kubernetes.
    expect(load.answers.filter((a) => a.ms >= HANG_MS)).toEqual([]);
    const decisions = await metric(arbiter.url, 'arbiter_decisions_total');
    const allowed = decisions.get('{outcome="ALLOW",capability="files.read"}') ?? 0;
    expect(allowed).toBeGreaterThanOrEqual(beforeChange.length);
  }, 120_000);
});
