export {
  KubernetesConfig,
  DEFAULT_KUBERNETES_CONFIG_SETTINGS,
  type KubernetesConfigDeps,
  type KubernetesConfigSettings,
} from './kubernetes-config.js';
export { DEFAULT_LEASE_TIMING, type LeaseSettings } from './leader-elector.js';
export { KUBERNETES_CALLER } from './leader-duties.js';
