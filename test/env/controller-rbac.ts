import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './kube-apiserver.js';

/** deploy/rbac, the controller's least privilege; compiled code (bench/) names its own copy. */
export const RBAC_FILE = fileURLToPath(new URL('../../deploy/rbac/controller-rbac.yaml', import.meta.url));
export const CONTROLLER_NAMESPACE = 'arbiter-system';
export const API_BASE = '/apis/governance.arbiter.dev/v1alpha1';
export const PLURAL: Record<string, string> = {
  Capability: 'capabilities',
  Policy: 'policies',
  ActorGrant: 'actorgrants',
};

interface Manifest {
  apiVersion: string;
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

/** A governance custom object as the API server takes it. */
export function governanceObject(kind: string, name: string, spec: unknown): Record<string, unknown> {
  return { apiVersion: 'governance.arbiter.dev/v1alpha1', kind, metadata: { name }, spec };
}

/**
 * Applies deploy/rbac as written (namespace arbiter-system) and returns a kubeconfig file
 * impersonating its ServiceAccount, so the controller runs with exactly those rules.
 */
export async function installControllerRbac(cp: ControlPlane, rbacFile = RBAC_FILE): Promise<string> {
  await cp.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CONTROLLER_NAMESPACE } },
  });
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
