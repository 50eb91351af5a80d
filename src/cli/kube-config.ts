import { KubeConfig } from '@kubernetes/client-node';
import type { KubernetesOptions } from './serve-options.js';

/** The cluster's client configuration: a kubeconfig file, or the in-cluster ServiceAccount. */
export function loadKubeConfig(options: KubernetesOptions): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
  else kubeConfig.loadFromCluster();
  return kubeConfig;
}
