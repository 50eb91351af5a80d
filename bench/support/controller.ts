import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../../test/env/kube-apiserver.js';
import { installCrds } from '../../test/env/install-crds.js';
import { REPO, startArbiter, type ServerProcess } from './processes.js';

/**
 * The controller as users run it (`arbiter serve --kubeconfig`, the least-privilege RBAC
 * of deploy/rbac), as test/operator/support/operator-env.ts starts it. That module is not
 * imported: its helpers load vitest and find the repository from their own location.
 */
export const CONTROLLER_NAMESPACE = 'arbiter-system';
export const API_BASE = '/apis/governance.arbiter.dev/v1alpha1';
export const PLURAL: Record<string, string> = {
  Capability: 'capabilities',
  Policy: 'policies',
  ActorGrant: 'actorgrants',
};

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
}

const PATHS: Record<string, (m: Manifest) => string> = {
  ServiceAccount: (m) => `/api/v1/namespaces/${m.metadata.namespace}/serviceaccounts`,
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: (m) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${m.metadata.namespace}/roles`,
  RoleBinding: (m) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${m.metadata.namespace}/rolebindings`,
};

export function governanceObject(kind: string, name: string, spec: unknown): Record<string, unknown> {
  return { apiVersion: 'governance.arbiter.dev/v1alpha1', kind, metadata: { name }, spec };
}

/** Creates an object through the API server; throws unless it answers 201. */
export async function createObject(
  cp: ControlPlane,
  kind: string,
  name: string,
  spec: unknown,
): Promise<void> {
  const res = await cp.request('POST', `${API_BASE}/${PLURAL[kind]}`, {
    body: governanceObject(kind, name, spec),
  });
  if (res.status !== 201) throw new Error(`creating ${kind} ${name}: HTTP ${res.status} ${res.text}`);
}

/** CRDs and deploy/rbac; returns a kubeconfig file impersonating the controller's ServiceAccount. */
export async function prepareCluster(cp: ControlPlane): Promise<string> {
  // Compiled, installCrds would look for crds/ beside its own output: name the repository's.
  await installCrds(cp, { dir: join(REPO, 'crds') });
  await cp.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CONTROLLER_NAMESPACE } },
  });
  const rbacFile = join(REPO, 'deploy/rbac/controller-rbac.yaml');
  const docs = parseAllDocuments(await readFile(rbacFile, 'utf8')).map((d) => d.toJS() as Manifest);
  for (const doc of docs) {
    const path = PATHS[doc.kind];
    if (!path) throw new Error(`unexpected kind ${doc.kind} in ${rbacFile}`);
    const res = await cp.request('POST', path(doc), { body: doc });
    if (res.status !== 201 && res.status !== 409) throw new Error(`creating ${doc.kind}: ${res.text}`);
  }
  const file = join(cp.dir, 'controller-sa.kubeconfig');
  await writeFile(file, cp.serviceAccountKubeConfig(CONTROLLER_NAMESPACE, 'arbiter').exportConfig(), {
    mode: 0o600,
  });
  return file;
}

/** `arbiter serve --kubeconfig` (embedded file audit log); resolves once /readyz is 200. */
export function startController(kubeconfig: string, identity: string): Promise<ServerProcess> {
  return startArbiter({
    kubeconfig,
    timeoutMs: 60_000,
    extraArgs: ['--lease-namespace', CONTROLLER_NAMESPACE, '--identity', identity],
  });
}
