import { join } from 'node:path';
import {
  API_BASE,
  CONTROLLER_NAMESPACE,
  PLURAL,
  governanceObject,
  installControllerRbac,
} from '../../test/env/controller-rbac.js';
import type { ControlPlane } from '../../test/env/kube-apiserver.js';
import { installCrds } from '../../test/env/install-crds.js';
import { REPO, startArbiter, type ServerProcess } from './processes.js';

/**
 * The controller as users run it (`arbiter serve --kubeconfig`, the least-privilege RBAC
 * of deploy/rbac), as the operator tests start it. Compiled, the test helpers would look for
 * crds/ and deploy/ beside their own output: the repository's are named.
 */
export { API_BASE, CONTROLLER_NAMESPACE, PLURAL, governanceObject };

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
  await installCrds(cp, { dir: join(REPO, 'crds') });
  return installControllerRbac(cp, join(REPO, 'deploy/rbac/controller-rbac.yaml'));
}

/** `arbiter serve --kubeconfig` (embedded file audit log); resolves once /readyz is 200. */
export function startController(kubeconfig: string, identity: string): Promise<ServerProcess> {
  return startArbiter({
    kubeconfig,
    timeoutMs: 60_000,
    extraArgs: ['--lease-namespace', CONTROLLER_NAMESPACE, '--identity', identity],
  });
}
