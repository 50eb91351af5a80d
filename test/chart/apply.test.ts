import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import type { ControlPlane } from '../env/kube-apiserver.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { eventually, startController } from '../operator/support/operator-env.js';
import { renderChart, type KubeObject } from './support/render-chart.js';
import { VALUE_SETS } from './support/value-sets.js';

/** The namespace test/operator's launcher puts the Lease in (--lease-namespace). */
const NAMESPACE = 'arbiter-system';

interface Resource {
  name: string;
  kind: string;
  namespaced: boolean;
}

interface Discovery {
  /** `group/version` and `group/version/Kind`, as helm's .Capabilities.APIVersions. */
  apiVersions: string[];
  resources: Map<string, { groupVersion: string; resource: Resource }>;
}

/** What helm learns from a cluster before rendering: its API groups, versions and kinds. */
async function discover(controlPlane: ControlPlane): Promise<Discovery> {
  const groups = await controlPlane.request<{ groups: { versions: { groupVersion: string }[] }[] }>(
    'GET',
    '/apis',
  );
  const groupVersions = ['v1', ...groups.body.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))];
  const discovery: Discovery = { apiVersions: [], resources: new Map() };
  for (const groupVersion of groupVersions) {
    const path = groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`;
    const list = await controlPlane.request<{ resources: Resource[] }>('GET', path);
    discovery.apiVersions.push(groupVersion);
    for (const resource of list.body.resources.filter((r) => !r.name.includes('/'))) {
      discovery.apiVersions.push(`${groupVersion}/${resource.kind}`);
      discovery.resources.set(`${groupVersion}/${resource.kind}`, { groupVersion, resource });
    }
  }
  return discovery;
}

function collectionPath(discovery: Discovery, object: KubeObject): string {
  const found = discovery.resources.get(`${object.apiVersion}/${object.kind}`);
  if (!found) throw new Error(`the server does not serve ${object.apiVersion} ${object.kind}`);
  const prefix = found.groupVersion === 'v1' ? '/api/v1' : `/apis/${found.groupVersion}`;
  const namespace = found.resource.namespaced ? `/namespaces/${object.metadata.namespace ?? NAMESPACE}` : '';
  return `${prefix}${namespace}/${found.resource.name}`;
}

describeWithControlPlane('the rendered chart on a real kube-apiserver', (controlPlane) => {
  let discovery: Discovery;
  const render = (values: Record<string, unknown>, name = 'arbiter') =>
    renderChart({
      values,
      name,
      namespace: NAMESPACE,
      kubeVersion: controlPlane().version.gitVersion,
      apiVersions: discovery.apiVersions,
    });

  beforeAll(async () => {
    discovery = await discover(controlPlane());
    const created = await controlPlane().request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    });
    expect(created.status, created.text).toBe(201);
  });

  for (const [name, values] of Object.entries(VALUE_SETS)) {
    it(`accepts every object (server-side dry run): ${name}`, async () => {
      const chart = await render(values);
      const applied: string[] = [];
      for (const object of chart.objects) {
        if (object.kind === 'ServiceMonitor') {
          // Its CRD (prometheus-operator) is not on the test server; render.test.ts checks its shape.
          expect(discovery.apiVersions).not.toContain('monitoring.coreos.com/v1');
          continue;
        }
        if (object.apiVersion === 'cert-manager.io/v1') {
          // Issuers and Certificates (admission.certManager): cert-manager's CRDs are not on
          // the test server either; render.test.ts checks their shape and how they chain.
          expect(['Issuer', 'Certificate']).toContain(object.kind);
          expect(discovery.apiVersions).not.toContain('cert-manager.io/v1');
          continue;
        }
        const res = await controlPlane().request('POST', `${collectionPath(discovery, object)}?dryRun=All`, {
          body: object,
        });
        expect(res.status, `${object.kind} ${object.metadata.name}: ${res.text}`).toBe(201);
        applied.push(object.kind);
      }
      expect(applied).toEqual(expect.arrayContaining(['CustomResourceDefinition', 'Deployment', 'Service']));
      expect(applied.includes('PodDisruptionBudget')).toBe(chart.one('Deployment').spec.replicas > 1);
    });
  }

  it('the API server refuses an object the chart must never render (the dry run checks)', async () => {
    const chart = await render({});
    const deployment = structuredClone(chart.one('Deployment'));
    deployment.spec.template.spec.containers[0].readinessProbe.httpGet.port =
      'no-such-port-name-that-is-too-long';
    const res = await controlPlane().request('POST', `${collectionPath(discovery, deployment)}?dryRun=All`, {
      body: deployment,
    });
    expect(res.status, res.text).toBe(422);
  });

  describeController();

  /**
   * Installs the chart's CRDs, ServiceAccount and RBAC for real and runs the controller
   * (`arbiter serve --kubeconfig`, test/operator's launcher) as that ServiceAccount, by
   * impersonation: the chart's RBAC is enough for it.
   */
  function describeController(): void {
    let arbiter: ArbiterProcess | undefined;
    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it("runs the controller with exactly the chart's RBAC, as the chart's ServiceAccount", async () => {
      const chart = await render({}, 'gov');
      const kinds = [
        'CustomResourceDefinition',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
      ];
      for (const object of chart.objects.filter((o) => kinds.includes(o.kind))) {
        const res = await controlPlane().request('POST', collectionPath(discovery, object), { body: object });
        expect(res.status, `${object.kind} ${object.metadata.name}: ${res.text}`).toBe(201);
      }
      await eventually(
        'the CRDs to be served',
        async () => {
          const res = await controlPlane().request(
            'GET',
            '/apis/governance.arbiter.dev/v1alpha1/capabilities',
          );
          return res.status === 200 ? true : undefined;
        },
        15_000,
      );
      const kube = (method: string, path: string, body: unknown) =>
        controlPlane().request<any>(method, path, { body });
      const api = '/apis/governance.arbiter.dev/v1alpha1';
      await kube('POST', `${api}/capabilities`, {
        apiVersion: 'governance.arbiter.dev/v1alpha1',
        kind: 'Capability',
        metadata: { name: 'files-read' },
        spec: { name: 'files.read', riskLevel: 'low' },
      });

      const serviceAccount = chart.one('ServiceAccount');
      expect(serviceAccount.metadata).toMatchObject({ name: 'gov-arbiter', namespace: NAMESPACE });
      const kubeconfig = join(controlPlane().dir, 'chart-sa.kubeconfig');
      await writeFile(
        kubeconfig,
        controlPlane().serviceAccountKubeConfig(NAMESPACE, serviceAccount.metadata.name).exportConfig(),
        { mode: 0o600 },
      );
      arbiter = await startController({ kubeconfig, identity: 'chart-controller' });
      const url = arbiter.url;

      await eventually(
        '/readyz',
        async () => ((await call(url, 'GET', '/readyz')).status === 200 ? true : undefined),
        15_000,
      );
      // Reads: the informers listed and watch what was there.
      const capabilities = await call(url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' });
      expect(capabilities.body.capabilities.map((c: { name: string }) => c.name)).toEqual(['files.read']);
      // Writes through the API (an ActorGrant object), then a decision that uses it.
      const grant = await call(url, 'POST', '/api/v1/actors/agent-9/grants', {
        key: 'dev-admin-key',
        body: { capability: 'files.read' },
      });
      expect(grant.status, JSON.stringify(grant.body)).toBe(201);
      const decision = await call(url, 'POST', '/api/v1/governance/propose', {
        key: 'dev-admin-key',
        body: {
          actor: { id: 'agent-9', type: 'automation' },
          action: { capability: 'files.read', parameters: {} },
        },
      });
      expect(decision.body.outcome).toBe('ALLOW');
      // The leader (Lease in the Role's namespace) writes status.
      await eventually(
        'the Ready condition on the Capability',
        async () => {
          const res = await controlPlane().request<any>('GET', `${api}/capabilities/files-read`);
          const ready = res.body?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
          return ready?.status === 'True' ? ready : undefined;
        },
        15_000,
      );
      const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/arbiter-controller`;
      const lease = await controlPlane().request<any>('GET', leasePath);
      expect(lease.body?.spec?.holderIdentity).toBe('chart-controller');
      // Before the log is read for refusals, the writes that could be refused have happened:
      // a status on every object (the last writes of the leader's pass) and a renewal of the
      // Lease (an update, where taking it was a create).
      await eventually('a Ready condition on every object', async () => {
        for (const plural of ['capabilities', 'policies', 'actorgrants']) {
          const list = await controlPlane().request<any>('GET', `${api}/${plural}`);
          const ready = (list.body.items as any[]).every((o) =>
            o.status?.conditions?.some((c: { type: string }) => c.type === 'Ready'),
          );
          if (list.status !== 200 || !ready) return undefined;
        }
        return true;
      });
      await eventually(
        'a renewal of the Lease',
        async () => {
          const spec = (await controlPlane().request<any>('GET', leasePath)).body?.spec;
          return spec?.holderIdentity === 'chart-controller' && spec.renewTime !== lease.body.spec.renewTime
            ? true
            : undefined;
        },
        15_000,
      );
      const denied = arbiter.logs.filter((line) => /forbidden|"status":403\b|\b403 /i.test(line));
      expect(denied, denied.join('\n')).toEqual([]);
    });
  }
});
