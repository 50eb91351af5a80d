import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../../env/kube-apiserver.js';
import {
  spawnArbiter,
  EXAMPLE_KEYS,
  REPO,
  call,
  tempDir,
  type ArbiterProcess,
} from '../../support/arbiter-process.js';

export const RBAC_FILE = join(REPO, 'deploy/rbac/controller-rbac.yaml');
export const CONTROLLER_NAMESPACE = 'arbiter-system';
export const API_BASE = '/apis/governance.arbiter.dev/v1alpha1';

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

/** Applies deploy/rbac as written (namespace arbiter-system) and returns a kubeconfig file impersonating its ServiceAccount. */
export async function installControllerRbac(cp: ControlPlane): Promise<string> {
  await cp.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CONTROLLER_NAMESPACE } },
  });
  const docs = parseAllDocuments(await readFile(RBAC_FILE, 'utf8')).map((d) => d.toJS() as Manifest);
  for (const doc of docs) {
    const path = PATHS[doc.kind];
    if (!path) throw new Error(`unexpected kind ${doc.kind} in ${RBAC_FILE}`);
    const res = await cp.request('POST', path(doc), { body: doc });
    if (res.status !== 201 && res.status !== 409) throw new Error(`creating ${doc.kind}: ${res.text}`);
  }
  const file = join(cp.dir, 'controller-sa.kubeconfig');
  await writeFile(file, cp.serviceAccountKubeConfig(CONTROLLER_NAMESPACE, 'arbiter').exportConfig(), {
    mode: 0o600,
  });
  return file;
}

export interface ControllerOptions {
  kubeconfig: string;
  identity: string;
  redisUrl?: string;
  extraArgs?: string[];
  /** An API keys file other than the examples'. */
  apiKeys?: string;
}

/**
 * `arbiter serve --kubeconfig` as users run it, on a free port; resolves once it listens.
 * (startArbiter always passes --manifests, which --kubeconfig excludes.)
 */
export async function startController(options: ControllerOptions): Promise<ArbiterProcess> {
  const dataDir = await tempDir('arbiter-operator-');
  const args = [
    'serve',
    '--kubeconfig',
    options.kubeconfig,
    '--lease-namespace',
    CONTROLLER_NAMESPACE,
    '--identity',
    options.identity,
    '--api-keys',
    options.apiKeys ?? EXAMPLE_KEYS,
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    ...(options.redisUrl ? ['--redis', options.redisUrl] : []),
    ...(options.extraArgs ?? []),
  ];
  return spawnArbiter(args, { dataDir, manifestsDir: '' });
}

/**
 * Polls `probe` until it returns a value (not undefined), within `timeoutMs`, and returns it.
 * The bound only keeps a test from hanging: how fast something happens is bench/'s to measure.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 5_000,
): Promise<{ value: T }> {
  const started = Date.now();
  let last: unknown;
  while (Date.now() - started < timeoutMs) {
    try {
      const value = await probe();
      if (value !== undefined) return { value };
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
  );
}

export function object(kind: string, name: string, spec: unknown): Record<string, unknown> {
  return { apiVersion: 'governance.arbiter.dev/v1alpha1', kind, metadata: { name }, spec };
}

export const PLURAL: Record<string, string> = {
  Capability: 'capabilities',
  Policy: 'policies',
  ActorGrant: 'actorgrants',
};

/** The decision outcome for one proposal, through the real HTTP API. */
export async function outcomeOf(
  arbiter: ArbiterProcess,
  actor: string,
  capability: string,
  parameters: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: 'dev-admin-key',
    body: { actor: { id: actor, type: 'automation' }, action: { capability, parameters } },
  });
  if (res.status !== 200) throw new Error(`propose: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.outcome);
}
