import type { Logger } from 'pino';
import type { ReadinessCheck } from '../api/dependencies.js';
import { KubernetesConfig } from '../controller/index.js';
import type { ConfigAuditor } from '../governance/config-auditor.js';
import type { ConfigWriter } from '../governance/config-writer.js';
import type { IndexStore } from '../index/index.js';
import type { ToolDefinitionStatus } from '../mcp/definition-changes.js';
import type { Metrics } from '../metrics/index.js';
import { ApiObjectFile } from '../sources/api-object-file.js';
import { FirstSeenFile } from '../sources/first-seen-file.js';
import { EmbeddedConfig } from '../sources/embedded-config.js';
import { ManifestWatcher } from '../sources/manifest-watcher.js';
import { loadKubeConfig } from './kube-config.js';
import type { KubernetesOptions, ServeOptions } from './serve-options.js';

/** Where configuration comes from, whichever backend: what serve.ts needs of it. */
export interface ConfigBackend {
  writer: ConfigWriter;
  readiness: ReadinessCheck;
  start(): Promise<void>;
  close(): Promise<void>;
  /** Whether this replica leads (writes status, audits config, checkpoints); always without a cluster. */
  isLeader(): boolean;
  /** Leadership changes (cluster mode; never called without a cluster); returns unsubscribe. */
  onLeadership(listener: (leading: boolean) => void): () => void;
  observe(metrics: Metrics): void;
  /** Where Capabilities show a pinned MCP tool's changed definition (cluster mode only). */
  toolDefinitionStatus?: ToolDefinitionStatus;
}

export interface ConfigBackendDeps {
  index: IndexStore;
  auditor: ConfigAuditor;
  clock: () => Date;
  logger: Logger;
}

/**
 * Chooses the configuration source: the cluster's custom resources with --kubernetes or
 * --kubeconfig, else the manifests folder plus API-written objects in the data directory.
 */
export function openConfigBackend(options: ServeOptions, deps: ConfigBackendDeps): ConfigBackend {
  if (options.kubernetes) return kubernetesBackend(options.kubernetes, deps);
  const config = new EmbeddedConfig({
    manifests: options.manifests
      ? new ManifestWatcher(options.manifests, deps.logger.child({ component: 'manifests' }))
      : undefined,
    apiObjects: ApiObjectFile.inDataDir(options.dataDir),
    firstSeen: FirstSeenFile.inDataDir(options.dataDir),
    index: deps.index,
    auditor: deps.auditor,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'config' }),
  });
  return {
    writer: config,
    readiness: {
      name: 'configuration',
      check: () => ({ ready: true, message: `${config.problems.length} manifest problem(s)` }),
    },
    start: async () => {
      // Embedded mode audits against the log's own history of configuration events.
      await deps.auditor.restore();
      await config.start();
    },
    close: () => config.close(),
    isLeader: () => true,
    onLeadership: () => () => undefined,
    observe: () => undefined,
  };
}

function kubernetesBackend(options: KubernetesOptions, deps: ConfigBackendDeps): ConfigBackend {
  const kubeConfig = loadKubeConfig(options);
  const config = new KubernetesConfig({
    kubeConfig,
    index: deps.index,
    auditor: deps.auditor,
    lease: { ...options.lease, identity: options.identity },
    logger: deps.logger.child({ component: 'controller' }),
    clock: deps.clock,
  });
  return {
    writer: config,
    readiness: config.readiness(),
    start: () => config.start(),
    close: () => config.close(),
    isLeader: () => config.isLeader(),
    onLeadership: (listener) => config.onLeadership(listener),
    observe: (metrics) => metrics.observeController(config),
    toolDefinitionStatus: config.toolDefinitionConditions,
  };
}
