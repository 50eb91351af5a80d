import type { KubeConfig } from '@kubernetes/client-node';
import { serverEndpoint, type ArbiterEndpoint } from './arbiter-client.js';
import type { ConnectionFlags } from './arguments.js';
import { contextNamespace, NoKubeConfigError } from './kube-config.js';
import { PluginError } from './plugin-error.js';

/**
 * Where to send requests: --server as given; otherwise the Arbiter Service of the
 * namespace (--arbiter-namespace, else the kubeconfig context's), through a port-forward to one
 * of its pods (port-forward.ts says why not the API server's service proxy).
 */
export async function arbiterEndpoint(
  flags: ConnectionFlags,
  kubeConfig: () => Promise<KubeConfig>,
): Promise<ArbiterEndpoint> {
  if (flags.server) return serverEndpoint(flags.server);
  const config = await clusterKubeConfig(kubeConfig);
  // The Kubernetes client loads only on this path: --server needs none of it.
  const [{ findArbiterPod }, { openPortForward }] = await Promise.all([
    import('./cluster-discovery.js'),
    import('./port-forward.js'),
  ]);
  const namespace = flags.arbiterNamespace ?? contextNamespace(config);
  const pod = await findArbiterPod(config, {
    namespace,
    ...(flags.service ? { service: flags.service } : {}),
  });
  return openPortForward(config, pod);
}

async function clusterKubeConfig(kubeConfig: () => Promise<KubeConfig>): Promise<KubeConfig> {
  try {
    return await kubeConfig();
  } catch (err) {
    if (!(err instanceof NoKubeConfigError)) throw err;
    throw new PluginError(`${err.message}; pass --kubeconfig FILE, or reach Arbiter with --server URL`, 1, {
      cause: err,
    });
  }
}
