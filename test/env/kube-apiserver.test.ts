import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { describeWithControlPlane } from './describe-with-control-plane.js';

/** The harness itself: identities, the kubeconfig file, and an API server restart. */
describeWithControlPlane('control-plane harness', (controlPlane) => {
  it('authenticates the static users; RBAC authorizes them', async () => {
    const admin = controlPlane().makeKubeConfig().makeApiClient(CoreV1Api);
    expect((await admin.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    const alice = controlPlane().makeKubeConfig('alice').makeApiClient(CoreV1Api);
    await expect(alice.readNamespace({ name: 'default' })).rejects.toMatchObject({ code: 403 });
    expect(() => controlPlane().makeKubeConfig('mallory')).toThrow(/no test user/);
  });

  it('writes an admin kubeconfig file that @kubernetes/client-node loads', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane().kubeconfigPath);
    expect(kc.getCurrentCluster()?.server).toBe(controlPlane().url);
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('kube-system');
  });

  it('acts as a ServiceAccount by impersonation, with exactly its RBAC', async () => {
    const rbac = controlPlane().makeKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'read-namespaces' },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'read-namespaces' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'read-namespaces' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'arbiter-system', name: 'arbiter' }],
      },
    });
    const asController = controlPlane()
      .serviceAccountKubeConfig('arbiter-system', 'arbiter')
      .makeApiClient(CoreV1Api);
    expect((await asController.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    await expect(asController.listNamespace()).rejects.toMatchObject({ code: 403 });
    const other = controlPlane().serviceAccountKubeConfig('arbiter-system', 'other').makeApiClient(CoreV1Api);
    await expect(other.readNamespace({ name: 'default' })).rejects.toMatchObject({ code: 403 });
  });

  it('restarts kube-apiserver on the same port with the data intact', async () => {
    const cp = controlPlane();
    const core = cp.makeKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'survivor' }, data: { a: '1' } },
    });
    const url = cp.url;
    await cp.stopApiServer();
    await expect(cp.request('GET', '/readyz', { timeoutMs: 1_000 })).rejects.toThrow();
    await cp.startApiServer();
    expect(cp.url).toBe(url);
    const survivor = await core.readNamespacedConfigMap({ namespace: 'default', name: 'survivor' });
    expect(survivor.data).toEqual({ a: '1' });
    expect(existsSync(cp.dir)).toBe(true);
  });
});
