import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { PluginError } from './plugin-error.js';

/** Inside a pod: where client-node finds the in-cluster ServiceAccount token. */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Neither --kubeconfig nor a default one: the caller says what else would do. */
export class NoKubeConfigError extends PluginError {
  constructor() {
    super('there is no kubeconfig: $KUBECONFIG is unset and ~/.kube/config does not exist');
    this.name = 'NoKubeConfigError';
  }
}

export interface KubeConfigChoice {
  kubeconfig?: string;
  context?: string;
}

/**
 * The kubeconfig kubectl would use: --kubeconfig, else $KUBECONFIG (its files merged),
 * else ~/.kube/config, else the pod's ServiceAccount; --context picks the context.
 */
export async function loadKubeConfig(choice: KubeConfigChoice, env: NodeJS.ProcessEnv): Promise<KubeConfig> {
  if (!choice.kubeconfig && !hasDefaultKubeConfig(env)) throw new NoKubeConfigError();
  // Loaded here, not at startup: with --server and a token the plugin never needs it.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  try {
    if (choice.kubeconfig) kubeConfig.loadFromFile(choice.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (err) {
    throw new PluginError(`cannot load the kubeconfig: ${(err as Error).message}`, 1, { cause: err });
  }
  if (choice.context) {
    if (!kubeConfig.getContextObject(choice.context)) {
      throw new PluginError(`the kubeconfig has no context "${choice.context}"`);
    }
    kubeConfig.setCurrentContext(choice.context);
  }
  if (!kubeConfig.getCurrentCluster()) {
    throw new PluginError(`the kubeconfig's context "${kubeConfig.getCurrentContext()}" names no cluster`);
  }
  return kubeConfig;
}

/** Without one, client-node would quietly fall back to http://localhost:8080. */
function hasDefaultKubeConfig(env: NodeJS.ProcessEnv): boolean {
  if (env.KUBECONFIG) return true;
  return existsSync(join(env.HOME || homedir(), '.kube', 'config')) || existsSync(IN_CLUSTER_TOKEN);
}

/** The namespace of the kubeconfig's current context, as kubectl uses it; else `default`. */
export function contextNamespace(kubeConfig: KubeConfig): string {
  return kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace || 'default';
}
