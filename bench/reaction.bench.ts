import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane, type ControlPlane } from '../test/env/kube-apiserver.js';
import { API_BASE, createObject, prepareCluster, startController } from './support/controller.js';
import { ADMIN_AUTH } from './support/payloads.js';
import { propose } from './support/propose-loop.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';
import { watchArrivals, type WatchArrivals } from './support/watch-arrivals.js';

const TARGET_MS = 1_000;
const POLL_MS = 10;

/** A write to the API server, what the watch sees of it, and the outcome it leads to. */
interface Change {
  label: string;
  write: (cp: ControlPlane) => Promise<{ status: number; resourceVersion: string | undefined }>;
  event: { type: string; kind: string; name: string };
  outcome: string;
}

interface Sample {
  label: string;
  decisionMs: number;
  watchMs: number;
}

async function write(cp: ControlPlane, method: string, path: string, body?: unknown) {
  const res = await cp.request<{ metadata?: { resourceVersion?: string } }>(
    method,
    path,
    body === undefined ? {} : { body },
  );
  return { status: res.status, resourceVersion: res.body?.metadata?.resourceVersion };
}

/** One round: a new actor is granted files.read, then a policy on it is created, updated, deleted. */
function roundChanges(round: number): Change[] {
  const actor = `agent-${round}`;
  const policy = `no-secrets-${round}`;
  const rule = (outcome: string) => ({
    rules: [{ capability: 'files.read', condition: "parameters.path == '/secret'", outcome }],
  });
  const policyPath = `${API_BASE}/policies/${policy}`;
  return [
    {
      label: 'ActorGrant create -> ALLOW',
      write: async (cp) => {
        await createObject(cp, 'ActorGrant', actor, {
          actor: { id: actor, type: 'automation' },
          grants: [{ capability: 'files.read' }],
        });
        return { status: 201, resourceVersion: undefined };
      },
      event: { type: 'ADDED', kind: 'ActorGrant', name: actor },
      outcome: 'ALLOW',
    },
    {
      label: 'Policy create -> DENY',
      write: (cp) => write(cp, 'POST', `${API_BASE}/policies`, policyObject(policy, rule('DENY'))),
      event: { type: 'ADDED', kind: 'Policy', name: policy },
      outcome: 'DENY',
    },
    {
      label: 'Policy update -> ESCALATE',
      write: (cp) => write(cp, 'PATCH', policyPath, { spec: rule('ESCALATE') }),
      event: { type: 'MODIFIED', kind: 'Policy', name: policy },
      outcome: 'ESCALATE',
    },
    {
      label: 'Policy delete -> ALLOW',
      write: (cp) => write(cp, 'DELETE', policyPath),
      event: { type: 'DELETED', kind: 'Policy', name: policy },
      outcome: 'ALLOW',
    },
  ];
}

function policyObject(name: string, spec: unknown) {
  return { apiVersion: 'governance.arbiter.dev/v1alpha1', kind: 'Policy', metadata: { name }, spec };
}

/** Proposes every POLL_MS until the outcome is `expected`; performance.now() of that answer. */
async function firstDecision(url: string, actor: string, expected: string): Promise<number> {
  const body = JSON.stringify({
    actor: { id: actor, type: 'automation' },
    action: { capability: 'files.read', parameters: { path: '/secret' } },
  });
  const deadline = performance.now() + 10_000;
  for (;;) {
    const sentAt = performance.now();
    const { status, outcome } = await propose(url, ADMIN_AUTH, body);
    if (status !== 200) throw new Error(`reaction: propose answered HTTP ${status}`);
    if (outcome === expected) return performance.now();
    if (performance.now() > deadline)
      throw new Error(`reaction: still ${outcome}, not ${expected}, after 10 s`);
    await sleep(Math.max(0, POLL_MS - (performance.now() - sentAt)));
  }
}

async function measureRound(
  cp: ControlPlane,
  url: string,
  watch: WatchArrivals,
  round: number,
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const change of roundChanges(round)) {
    const written = await change.write(cp);
    const writtenAt = performance.now();
    if (written.status !== 200 && written.status !== 201)
      throw new Error(`reaction: ${change.label}: HTTP ${written.status}`);
    const decidedAt = await firstDecision(url, `agent-${round}`, change.outcome);
    const { type, kind, name } = change.event;
    const seenAt = await watch.arrival(type, kind, name, written.resourceVersion);
    samples.push({ label: change.label, decisionMs: decidedAt - writtenAt, watchMs: seenAt - writtenAt });
  }
  return samples;
}

async function measureController(
  cp: ControlPlane,
  kubeconfig: string,
  watch: WatchArrivals,
  rounds: number,
): Promise<Sample[]> {
  const arbiter = await startController(kubeconfig, 'bench-reaction');
  try {
    // Round 0 warms up connections, the JIT and the leader's status writes; not counted.
    await measureRound(cp, arbiter.url, watch, 0);
    const samples: Sample[] = [];
    for (let round = 1; round <= rounds; round++)
      samples.push(...(await measureRound(cp, arbiter.url, watch, round)));
    return samples;
  } finally {
    await arbiter.stop();
  }
}

function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * A change reaching decisions, in cluster mode: the controller (`arbiter serve
 * --kubeconfig`, deploy/rbac) against a real kube-apiserver. For each change (an
 * ActorGrant created, a Policy created, updated, deleted), the time from the API
 * server's answer to the write until the first proposal whose outcome reflects it
 * (proposals every 10 ms; the time is that proposal's answer). Baseline: when a plain
 * watch on the same resources, in this process, received the event.
 */
export async function reactionBench(report: Report, settings: BenchSettings): Promise<void> {
  const rounds = settings.quick ? 3 : 10;
  const cp = await startControlPlane();
  try {
    const kubeconfig = await prepareCluster(cp);
    await createObject(cp, 'Capability', 'files-read', { name: 'files.read', riskLevel: 'low' });
    const watch = await watchArrivals(cp, ['Policy', 'ActorGrant']);
    try {
      addFigures(report, await measureController(cp, kubeconfig, watch, rounds));
    } finally {
      watch.stop();
    }
  } finally {
    await cp.stop();
  }
}

function addFigures(report: Report, samples: Sample[]): void {
  const decision = sorted(samples.map((s) => s.decisionMs));
  const watched = sorted(samples.map((s) => s.watchMs));
  const slowest = samples.reduce((a, b) => (b.decisionMs > a.decisionMs ? b : a));
  for (const label of new Set(samples.map((s) => s.label))) {
    const of = sorted(samples.filter((s) => s.label === label).map((s) => s.decisionMs));
    console.log(`  ${label}: p50 ${percentile(of, 50).toFixed(1)} ms, max ${of.at(-1)!.toFixed(1)} ms`);
  }
  const name = 'change to decision';
  report.add({
    benchmark: name,
    metric: `p50 of ${samples.length} changes (baseline: a plain watch receiving the event)`,
    arbiter: percentile(decision, 50),
    baseline: percentile(watched, 50),
    unit: 'ms',
    higherIsBetter: false,
  });
  report.add({
    benchmark: name,
    metric: 'p99',
    arbiter: percentile(decision, 99),
    baseline: percentile(watched, 99),
    unit: 'ms',
    higherIsBetter: false,
  });
  report.add({
    benchmark: name,
    metric: 'max',
    arbiter: decision.at(-1)!,
    baseline: watched.at(-1)!,
    unit: 'ms',
    higherIsBetter: false,
    target: { text: `< ${TARGET_MS / 1000} s`, met: decision.at(-1)! < TARGET_MS },
    note: `slowest: ${slowest.label}`,
  });
}
