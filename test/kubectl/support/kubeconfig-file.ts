import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../../env/kube-apiserver.js';

/**
 * A kubeconfig file for the control plane's cluster whose user presents `token`, its
 * context set to `namespace` if given (as `kubectl config set-context --namespace` does).
 */
export async function writeKubeconfig(
  cp: ControlPlane,
  dir: string,
  user: { name: string; token: string; namespace?: string },
): Promise<string> {
  const cluster = cp.makeKubeConfig().getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user.name, token: user.token }],
    contexts: [
      {
        name: user.name,
        cluster: cluster.name,
        user: user.name,
        ...(user.namespace ? { namespace: user.namespace } : {}),
      },
    ],
    currentContext: user.name,
  });
  const path = join(dir, `${user.name}.kubeconfig`);
  await writeFile(path, kubeConfig.exportConfig(), { mode: 0o600 });
  return path;
}
