import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { startControlPlane, type ControlPlane } from '../test/env/kube-apiserver.js';
import { installCrds } from '../test/env/install-crds.js';
import { runKubectl } from '../test/env/kubectl.js';
import { freePort, REPO, startArbiter } from './support/processes.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

const SANDBOX = 'agents-sandbox';
/** The same RBAC, in a namespace the governance webhook's namespaceSelector leaves out. */
const IGNORED = 'agents-ignored';
const AGENT = `system:serviceaccount:${SANDBOX}:agent`;
const UNBOUND = `system:serviceaccount:${SANDBOX}:helper`;

interface Latencies {
  p50: number;
  p99: number;
}

/** Creates ConfigMaps one after another through the real API server, as `user`; latency of each. */
async function createLatencies(
  cp: ControlPlane,
  user: string,
  namespace: string,
  count: number,
  tag: string,
) {
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await cp.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      headers: { 'Impersonate-User': user },
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${tag}-${i}` },
        data: { n: String(i) },
      },
    });
    ms.push(performance.now() - t0);
    if (res.status !== 201)
      throw new Error(`admission bench: ${user} in ${namespace}: HTTP ${res.status} ${res.text}`);
  }
  return ms;
}

function summary(ms: number[]): Latencies {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function prepare(cp: ControlPlane): Promise<void> {
  await installCrds(cp, { dir: join(REPO, 'crds') });
  const dir = join(REPO, 'examples/admission');
  const sandbox = await readFile(join(dir, '01-sandbox.yaml'), 'utf8');
  // The same namespace, ServiceAccount role and binding once more, in a namespace labelled ignored.
  const ignored = parseAllDocuments(sandbox.replaceAll(SANDBOX, IGNORED))
    .map((d) => d.toJS() as { kind: string; metadata: Record<string, unknown>; subjects?: unknown[] })
    .filter((o) => o.kind !== 'ServiceAccount')
    .map((o) => {
      if (o.kind === 'Namespace') o.metadata.labels = { 'governance.arbiter.dev/ignore': 'true' };
      if (o.kind === 'RoleBinding')
        o.subjects = [{ kind: 'ServiceAccount', name: 'agent', namespace: SANDBOX }];
      return stringify(o);
    })
    .join('---\n');
  const apply = async (stdin: string | undefined, ...args: string[]) => {
    const result = await runKubectl(cp, ['apply', '--validate=false', ...args], stdin ? { stdin } : {});
    if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
  };
  await apply(undefined, '-f', dir);
  await apply(ignored, '-f', '-');
  for (const args of [
    ['create', 'rolebinding', 'helper', '--role=agent', `--serviceaccount=${SANDBOX}:helper`],
    ['create', 'deployment', 'web', '--image=nginx'],
  ]) {
    const result = await runKubectl(cp, ['-n', SANDBOX, ...args]);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
}

/**
 * 6. Admission: a governed request (a ConfigMap create of a bound ServiceAccount: the
 * webhook decides and records it) through the real kube-apiserver, against the same
 * request where no webhook matches (a namespace labelled governance.arbiter.dev/ignore);
 * and an unbound identity's request, which the webhook answers at once.
 */
export async function admissionBench(report: Report, settings: BenchSettings): Promise<void> {
  const count = settings.quick ? 100 : 1_000;
  const cp = await startControlPlane();
  try {
    await prepare(cp);
    const port = await freePort();
    const arbiter = await startArbiter({
      kubeconfig: cp.kubeconfigPath,
      timeoutMs: 60_000,
      extraArgs: [
        '--admission-url',
        `https://127.0.0.1:${port}`,
        '--admission-port',
        String(port),
        '--lease-namespace',
        'default',
      ],
    });
    try {
      await untilGoverned(cp);
      // Warm up every path (connections, JIT) before measuring; then interleave, so drift hits all alike.
      for (const [user, ns] of [
        [AGENT, SANDBOX],
        [AGENT, IGNORED],
        [UNBOUND, SANDBOX],
      ] as const)
        await createLatencies(cp, user, ns, Math.ceil(count / 5), `warm-${user.length}-${ns}`);
      const governed: number[] = [];
      const unmatched: number[] = [];
      const unbound: number[] = [];
      const inArbiter = { governed: 0, unbound: 0 };
      const rounds = 5;
      for (let round = 0; round < rounds; round++) {
        // Phases run one after another, so the histogram's growth in a phase is that phase's.
        let before = await webhookSeconds(arbiter.url);
        governed.push(...(await createLatencies(cp, AGENT, SANDBOX, count / rounds, `gov-${round}`)));
        let after = await webhookSeconds(arbiter.url);
        inArbiter.governed += after - before;
        unmatched.push(...(await createLatencies(cp, AGENT, IGNORED, count / rounds, `none-${round}`)));
        before = await webhookSeconds(arbiter.url);
        unbound.push(...(await createLatencies(cp, UNBOUND, SANDBOX, count / rounds, `unbound-${round}`)));
        after = await webhookSeconds(arbiter.url);
        inArbiter.unbound += after - before;
      }
      const [g, n, u] = [summary(governed), summary(unmatched), summary(unbound)];
      const name = 'admission';
      const each = `${count} sequential ConfigMap creates`;
      report.add({
        benchmark: name,
        metric: `governed request p50 (${each}; baseline: no webhook matching)`,
        arbiter: g.p50,
        baseline: n.p50,
        unit: 'ms',
        higherIsBetter: false,
      });
      report.add({
        benchmark: name,
        metric: 'governed request p99',
        arbiter: g.p99,
        baseline: n.p99,
        unit: 'ms',
        higherIsBetter: false,
      });
      report.add({
        benchmark: name,
        metric: 'unbound identity through the webhook p50 (not governed)',
        arbiter: u.p50,
        baseline: n.p50,
        unit: 'ms',
        higherIsBetter: false,
      });
      report.add({
        benchmark: name,
        metric: 'unbound identity through the webhook p99',
        arbiter: u.p99,
        baseline: n.p99,
        unit: 'ms',
        higherIsBetter: false,
      });
      report.add({
        benchmark: name,
        metric: 'time inside Arbiter per review, mean: governed (decision + audit append)',
        arbiter: (inArbiter.governed / count) * 1e6,
        unit: 'µs',
      });
      report.add({
        benchmark: name,
        metric: 'time inside Arbiter per review, mean: unbound identity (not governed)',
        arbiter: (inArbiter.unbound / count) * 1e6,
        unit: 'µs',
      });
    } finally {
      await arbiter.stop();
    }
  } finally {
    await cp.stop();
  }
}

/** arbiter_admission_duration_seconds_sum of the governance webhook, from /metrics. */
async function webhookSeconds(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^arbiter_admission_duration_seconds_sum\{webhook="governance"\} (\S+)$/m.exec(text);
  return match ? Number(match[1]) : 0;
}

/** The leader has made its certificate and configurations, and the API server calls the webhook. */
async function untilGoverned(cp: ControlPlane): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    // Scaling beyond 10 replicas is a DENY of the example policy, once the webhook is asked.
    const res = await cp.request(
      'PATCH',
      `/apis/apps/v1/namespaces/${SANDBOX}/deployments/web/scale?dryRun=All`,
      {
        headers: { 'Impersonate-User': AGENT },
        contentType: 'application/merge-patch+json',
        body: { spec: { replicas: 50 } },
      },
    );
    if (res.text.includes('admission webhook')) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('admission bench: the governance webhook never came into effect');
}
