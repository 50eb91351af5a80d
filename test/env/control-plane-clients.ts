import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { ControlPlane } from './kube-apiserver.js';

/** POSTs an object to the control plane as its admin and expects it created. */
export async function create(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  const res = await cp.request('POST', path, { body });
  expect(res.status, `POST ${path}: ${res.text}`).toBe(201);
}

/** A KubeConfig for the control plane's cluster with a token the API server does not know. */
export function withUnknownToken(cp: ControlPlane): KubeConfig {
  const cluster = cp.makeKubeConfig().getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'nobody', token: 'not-a-token-the-api-server-knows' }],
    contexts: [{ name: 'nobody', cluster: cluster.name, user: 'nobody' }],
    currentContext: 'nobody',
  });
  return kc;
}

/** A token of ServiceAccount namespace/name from the TokenRequest API, as the kubelet mounts into pods. */
export async function serviceAccountToken(
  cp: ControlPlane,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  const res = await cp.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } } },
  );
  expect(res.status, res.text).toBe(201);
  return res.body.status.token;
}
