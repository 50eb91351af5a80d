import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { FileCheckpointStore, openFileAuditLog } from '../audit/file/index.js';
import { ConfigMapCheckpointStore } from '../audit/kube/index.js';
import { openRedisAuditLog } from '../audit/redis/index.js';
import { CoreV1Api } from '@kubernetes/client-node';
import type { CheckpointStore } from '../audit/audit-log.js';
import { loadKubeConfig } from './kube-config.js';
import type { ServeOptions } from './serve-options.js';

const RETAIN_CHECKPOINTS = 100;

/**
 * Chooses the audit backend: a Redis stream when --redis is given, else the JSONL file
 * in the data directory. Only the leader writes Redis checkpoints (isLeader is read late:
 * leadership is known only once the configuration backend runs).
 */
export async function openAuditBackend(
  options: ServeOptions,
  logger: Logger,
  isLeader: () => boolean,
): Promise<AuditLog> {
  const auditLogger = logger.child({ component: 'audit' });
  if (options.redis) {
    return openRedisAuditLog({
      redis: options.redis.url,
      appendTimeoutMs: options.redis.appendTimeoutMs,
      ...(options.redis.waitReplicas > 0
        ? { waitReplicas: { count: options.redis.waitReplicas, timeoutMs: options.redis.appendTimeoutMs } }
        : {}),
      checkpoints: {
        store: checkpointStore(options),
        isLeader,
        everyEntries: options.checkpointEvery.entries,
        intervalMs: options.checkpointEvery.seconds * 1000,
      },
      logger: auditLogger,
    });
  }
  return openFileAuditLog({
    dir: options.dataDir,
    checkpointEvery: options.checkpointEvery,
    retainCheckpoints: RETAIN_CHECKPOINTS,
    logger: auditLogger,
  });
}

/** In a cluster the leader checkpoints the shared chain into a ConfigMap; else into the data directory. */
function checkpointStore(options: ServeOptions): CheckpointStore {
  if (!options.kubernetes)
    return new FileCheckpointStore({ dir: options.dataDir, retain: RETAIN_CHECKPOINTS });
  return new ConfigMapCheckpointStore({
    api: loadKubeConfig(options.kubernetes).makeApiClient(CoreV1Api),
    namespace: options.kubernetes.lease.namespace,
    name: options.kubernetes.checkpointConfigMap,
    retain: RETAIN_CHECKPOINTS,
  });
}
