import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { FileCheckpointStore, openFileAuditLog } from '../audit/file/index.js';
import { openRedisAuditLog } from '../audit/redis/index.js';
import type { ServeOptions } from './serve-options.js';

const RETAIN_CHECKPOINTS = 100;

/**
 * Chooses the audit backend: a Redis stream when --redis is given, else the JSONL file
 * in the data directory. Without a cluster, checkpoints go to the data directory.
 */
export async function openAuditBackend(options: ServeOptions, logger: Logger): Promise<AuditLog> {
  const auditLogger = logger.child({ component: 'audit' });
  if (options.redis) {
    return openRedisAuditLog({
      redis: options.redis.url,
      appendTimeoutMs: options.redis.appendTimeoutMs,
      ...(options.redis.waitReplicas > 0
        ? { waitReplicas: { count: options.redis.waitReplicas, timeoutMs: options.redis.appendTimeoutMs } }
        : {}),
      checkpoints: {
        store: new FileCheckpointStore({ dir: options.dataDir, retain: RETAIN_CHECKPOINTS }),
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
