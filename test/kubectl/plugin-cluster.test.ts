import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderChart, type KubeObject } from '../chart/support/render-chart.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { freePort } from '../env/free-ports.js';
import type { ControlPlane } from '../env/kube-apiserver.js';
import { KEYS, removeDir, tempDir } from '../support/arbiter-process.js';
import { writeKubeconfig } from './support/kubeconfig-file.js';
import { isOneLine, pluginEnv, runPlugin } from './support/run-plugin.js';
import { create } from '../env/control-plane-clients.js';

/**
 * Without --server the plugin finds Arbiter in the cluster: the chart's Service by its
 * label, a running pod behind it, and a port-forward to it through the API server. This
 * control plane has no kubelet, so the tunnel itself cannot open: the tests go as far as
 * the real API server allows, up to its refusal of the port-forward, which the plugin
 * must pass on in one line. (The --server suite covers the requests themselves.)
 */
const RELEASE_NAMESPACE = 'review';
const NOT_RUNNING_NAMESPACE = 'staging';
const TWO_RELEASES_NAMESPACE = 'twice';

describeWithControlPlane(
  'kubectl arbiter without --server: finding Arbiter in the cluster',
  (controlPlane) => {
    let home: string;
    let kubeletPort: number;
    /** admin, with the release's namespace as the context's namespace. */
    let adminKubeconfig: string;
    let aliceKubeconfig: string;

    const plugin = (kubeconfig: string, ...args: string[]) =>
      runPlugin(['--kubeconfig', kubeconfig, '--token', KEYS.reviewer, ...args], pluginEnv(home));

    beforeAll(async () => {
      home = await tempDir('arbiter-kubectl-home-');
      kubeletPort = await freePort();
      const cp = controlPlane();
      const inRelease = (name: string) =>
        writeKubeconfig(cp, home, { name, token: cp.users[name]!.token, namespace: RELEASE_NAMESPACE });
      adminKubeconfig = await inRelease('admin');
      aliceKubeconfig = await inRelease('alice');
      // A node whose kubelet port nobody listens on: the API server will fail to dial it.
      await create(cp, '/api/v1/nodes', {
        metadata: { name: 'node-1' },
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
        },
      });
      await installRelease(cp, RELEASE_NAMESPACE, 'arbiter', { running: true });
      await installRelease(cp, NOT_RUNNING_NAMESPACE, 'arbiter', { running: false });
      await installRelease(cp, TWO_RELEASES_NAMESPACE, 'blue', { running: false });
      await installRelease(cp, TWO_RELEASES_NAMESPACE, 'green', { running: false, namespaceExists: true });
    });
    afterAll(async () => {
      await removeDir(home);
    });

    it("finds the chart's Service in the context's namespace and passes on the API server's refusal of the port-forward", async () => {
      const result = await plugin(adminKubeconfig, 'pending');
      expect(result.code).toBe(1);
      expect(isOneLine(result.stderr), result.stderr).toBe(true);
      expect(result.stderr).toBe(
        `error: port-forward to pod ${RELEASE_NAMESPACE}/arbiter-0 port 8080 (Service arbiter) failed: ` +
          `error dialing backend: dial tcp 127.0.0.1:${kubeletPort}: connect: connection refused (HTTP 500); ` +
          'or reach Arbiter with --server URL\n',
      );
    });

    it('--arbiter-namespace overrides the context; a namespace without the Service is named in the error', async () => {
      const result = await plugin(adminKubeconfig, 'pending', '--arbiter-namespace', 'default');
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'error: no Arbiter Service in namespace "default" (none labelled app.kubernetes.io/name=arbiter); ' +
          'name the namespace with --arbiter-namespace, the Service with --service NAME, or Arbiter with --server URL\n',
      );
    });

    it('a Service whose pods are not running, two releases in a namespace, a missing --service', async () => {
      const notRunning = await plugin(
        adminKubeconfig,
        'verify',
        '--arbiter-namespace',
        NOT_RUNNING_NAMESPACE,
      );
      expect(notRunning.stderr).toBe(
        `error: no running pod behind Service ${NOT_RUNNING_NAMESPACE}/arbiter (pods: arbiter-0 (Pending))\n`,
      );
      const two = await plugin(adminKubeconfig, 'verify', '--arbiter-namespace', TWO_RELEASES_NAMESPACE);
      expect(two.stderr).toBe(
        `error: 2 Arbiter Services in namespace "${TWO_RELEASES_NAMESPACE}" (blue-arbiter, green-arbiter): ` +
          'choose one with --service NAME\n',
      );
      const chosen = await plugin(
        adminKubeconfig,
        'verify',
        '--arbiter-namespace',
        TWO_RELEASES_NAMESPACE,
        '--service',
        'green-arbiter',
      );
      expect(chosen.stderr).toContain(
        `no running pod behind Service ${TWO_RELEASES_NAMESPACE}/green-arbiter`,
      );
      const missing = await plugin(adminKubeconfig, 'verify', '--service', 'nope');
      expect(missing.stderr).toMatch(
        /^error: could not find Arbiter's Service in namespace "review" \(404\): services "nope" not found\n$/,
      );
      for (const result of [notRunning, two, chosen, missing]) expect(result.code).toBe(1);
    });

    it('a user RBAC does not allow to look: the refusal, in one line', async () => {
      const result = await plugin(aliceKubeconfig, 'pending');
      expect(result.code).toBe(1);
      expect(isOneLine(result.stderr), result.stderr).toBe(true);
      expect(result.stderr).toMatch(
        /^error: the kubeconfig user may not find Arbiter's Service in namespace "review" \(403\): services is forbidden: User "alice" cannot list resource "services"/,
      );
    });

    it('without a kubeconfig it says what to pass', async () => {
      const result = await runPlugin(['--token', KEYS.reviewer, 'pending'], pluginEnv(home));
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'error: there is no kubeconfig: $KUBECONFIG is unset and ~/.kube/config does not exist; ' +
          'pass --kubeconfig FILE, or reach Arbiter with --server URL\n',
      );
    });
  },
);

/**
 * What `helm install RELEASE charts/arbiter -n NAMESPACE` leaves that the plugin looks at:
 * the Service as the chart renders it, and one pod of the Deployment's template (no
 * controller-manager here makes it), on node-1 and Running and Ready when `running`.
 */
async function installRelease(
  cp: ControlPlane,
  namespace: string,
  release: string,
  { running, namespaceExists = false }: { running: boolean; namespaceExists?: boolean },
): Promise<void> {
  const chart = await renderChart({ name: release, namespace, kubeVersion: 'v1.20.2' });
  if (!namespaceExists) await create(cp, '/api/v1/namespaces', { metadata: { name: namespace } });
  const service = chart.one('Service');
  await create(cp, `/api/v1/namespaces/${namespace}/services`, service);
  const template = chart.one('Deployment').spec.template as { metadata: KubeObject['metadata']; spec: any };
  const pod = `${release === 'arbiter' ? 'arbiter' : `${release}-arbiter`}-0`;
  await create(cp, `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name: pod, labels: template.metadata.labels },
    spec: { ...template.spec, ...(running ? { nodeName: 'node-1' } : {}) },
  });
  if (!running) return;
  const status = await cp.request('PATCH', `/api/v1/namespaces/${namespace}/pods/${pod}/status`, {
    body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
  });
  expect(status.status, status.text).toBe(200);
}
