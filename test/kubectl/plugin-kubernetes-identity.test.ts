import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderChart } from '../chart/support/render-chart.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import type { ControlPlane } from '../env/kube-apiserver.js';
import {
  API_BASE,
  PLURAL,
  eventually,
  installControllerRbac,
  startController,
} from '../operator/support/operator-env.js';
import {
  call,
  EXAMPLE_MANIFESTS,
  KEYS,
  removeDir,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { writeKubeconfig } from './support/kubeconfig-file.js';
import { isOneLine, pluginEnv, runPlugin } from './support/run-plugin.js';
import { create } from '../env/control-plane-clients.js';

const NAMESPACE = 'ops';

/**
 * The plugin with a Kubernetes identity: Arbiter in cluster mode (the example manifests as
 * custom resources), a reviewer whose kubeconfig holds a ServiceAccount token, and RBAC
 * (the chart's reviewer ClusterRole) deciding whether that reviewer may approve.
 */
describeWithControlPlane(
  "kubectl arbiter with the kubeconfig user's token, authorized by RBAC",
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    let home: string;
    let reviewBot: string;
    let bystander: string;

    const plugin = (kubeconfig: string, ...args: string[]) =>
      runPlugin(['--server', arbiter.url, '--kubeconfig', kubeconfig, ...args], pluginEnv(home));
    const escalated = async () => {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: {
            capability: 'deploy.production',
            parameters: { service: 'web', version: String(Math.random()) },
          },
        },
      });
      expect(res.body.outcome, JSON.stringify(res.body)).toBe('ESCALATE');
      return res.body.decision_id as string;
    };

    beforeAll(async () => {
      const cp = controlPlane();
      home = await tempDir('arbiter-kubectl-home-');
      await installCrds(cp);
      const controllerKubeconfig = await installControllerRbac(cp);
      await applyExampleManifests(cp);
      await create(cp, '/api/v1/namespaces', { metadata: { name: NAMESPACE } });
      for (const name of ['review-bot', 'bystander']) {
        await create(cp, `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { metadata: { name } });
      }
      const chart = await renderChart({
        name: 'arbiter',
        namespace: 'arbiter-system',
        kubeVersion: 'v1.20.2',
      });
      await create(
        cp,
        '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        chart.one('ClusterRole', 'arbiter-reviewer'),
      );
      await create(cp, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'review-bot-reviews' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'arbiter-reviewer' },
        subjects: [{ kind: 'ServiceAccount', name: 'review-bot', namespace: NAMESPACE }],
      });
      reviewBot = await kubeconfigOf(cp, home, 'review-bot');
      bystander = await kubeconfigOf(cp, home, 'bystander');
      arbiter = await startController({ kubeconfig: controllerKubeconfig, identity: 'kubectl-plugin-test' });
      // The controller decides from the custom resources once it has synced them.
      await eventually(
        'the example policies to be in force',
        async () => {
          const res = await call(arbiter.url, 'GET', '/api/v1/capabilities?limit=200', { key: KEYS.admin });
          const names = ((res.body?.capabilities ?? []) as { name: string }[]).map((c) => c.name);
          return names.includes('deploy.production') ? true : undefined;
        },
        30_000,
      );
    });
    afterAll(async () => {
      if (arbiter) {
        await arbiter.stop();
        await removeDir(arbiter.dataDir);
      }
      await removeDir(home);
    });

    it('a ServiceAccount bound to the reviewer role lists, reads and approves; the log names it', async () => {
      const id = await escalated();
      const pending = await plugin(reviewBot, 'pending');
      expect(pending.code, pending.stderr).toBe(0);
      expect(pending.stdout).toMatch(new RegExp(`^${id} .* deploy\\.production +ESCALATE `, 'm'));
      const trail = await plugin(reviewBot, 'get', id);
      expect(trail.code, trail.stderr).toBe(0);
      expect(trail.stdout).toMatch(/^Parameters: +\{"service":"web"/m);

      const approved = await plugin(reviewBot, 'approve', id, '--comment', 'release window');
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe(`decision ${id} (ESCALATE) approved\n`);
      const decision = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, {
        key: KEYS.admin,
      });
      expect(decision.body.audit.reviews).toMatchObject([
        { action: 'approve', reviewer: `serviceaccount:${NAMESPACE}/review-bot`, comment: 'release window' },
      ]);
    });

    it('a ServiceAccount RBAC does not allow to review: one line, exit 1, the decision still pending', async () => {
      const id = await escalated();
      const refused = await plugin(bystander, 'approve', id);
      expect(refused.code).toBe(1);
      expect(isOneLine(refused.stderr), refused.stderr).toBe(true);
      expect(refused.stderr).toMatch(/^error: not allowed \(403 FORBIDDEN\): /);
      // Lists are filtered to what RBAC lets the caller read, in any namespace: here nothing
      // (docs/reviewers.md); the waiting decision is not shown.
      const listed = await plugin(bystander, 'pending');
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).not.toContain(id);
      expect(listed.stderr).toMatch(/^no decisions are waiting for review/);
      const decision = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, {
        key: KEYS.admin,
      });
      expect(decision.body.audit.status).toBe('pending');
    });
  },
);

/** examples/manifests as custom resources, as `kubectl apply -f examples/manifests` would create them. */
async function applyExampleManifests(cp: ControlPlane): Promise<void> {
  for (const file of (await readdir(EXAMPLE_MANIFESTS)).filter((f) => f.endsWith('.yaml'))) {
    const text = await readFile(join(EXAMPLE_MANIFESTS, file), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const object = doc.toJS() as { kind: string } | null;
      if (object) await create(cp, `${API_BASE}/${PLURAL[object.kind]}`, object);
    }
  }
}

/** A kubeconfig whose user is the ServiceAccount, with a token from the TokenRequest API. */
async function kubeconfigOf(cp: ControlPlane, dir: string, serviceAccount: string): Promise<string> {
  const res = await cp.request<any>(
    'POST',
    `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${serviceAccount}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  expect(res.status, res.text).toBe(201);
  return writeKubeconfig(cp, dir, { name: serviceAccount, token: res.body.status.token as string });
}
