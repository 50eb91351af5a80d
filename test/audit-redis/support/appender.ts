import { Redis } from 'ioredis';
import type { AuditEntry, ChainHead } from '../../../src/audit/audit-log.js';
import { GENESIS_HASH, type SealedEntry } from '../../../src/audit/chain.js';
import { recordingLogger } from '../../../src/audit/file/test-fixtures.js';
import { ChainAppender, type ChainAppenderSettings } from '../../../src/audit/redis/chain-appender.js';
import { RedisAuditKeys } from '../../../src/audit/redis/redis-keys.js';
import { randomUuid } from '../../../src/model/index.js';

/**
 * A ChainAppender on its own connection, as the Redis log opens it (fail fast, no offline
 * queue), with what it reports recorded: stored and sealed batches, rollbacks, tree
 * catch-up requests and log lines. For tests of the appender's scheduling and races that
 * the log's API does not reach.
 */
export async function openAppender(
  url: string,
  options: Partial<ChainAppenderSettings> & { keyPrefix?: string } = {},
) {
  const { keyPrefix = `appender-${randomUuid()}`, ...settings } = options;
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
  });
  redis.on('error', () => undefined);
  await redis.connect();
  const keys = new RedisAuditKeys(keyPrefix);
  const [seq, hash] = await redis.hmget(keys.head, 'seq', 'hash');
  const head: ChainHead = seq && hash ? { seq: Number(seq), hash } : { seq: 0, hash: GENESIS_HASH };
  const { logged, logger } = recordingLogger();
  const stored: AuditEntry[][] = [];
  const sealed: SealedEntry[][] = [];
  const rollbacks: { known: ChainHead; found: ChainHead }[] = [];
  let treeBehind = 0;
  const appender = new ChainAppender(redis, keys, head, {
    appendTimeoutMs: 2000,
    settleTimeoutMs: 1000,
    maxBatchEntries: 100,
    maxBatchesInFlight: 2,
    maxAttempts: 32,
    cancelTtlSeconds: 60,
    newId: randomUuid,
    logger,
    onStored: (entries) => void stored.push([...entries]),
    onSealed: (batch) => void sealed.push([...batch]),
    onTreeBehind: () => void (treeBehind += 1),
    onRollback: (rollback) => void rollbacks.push(rollback),
    ...settings,
  });
  await appender.syncClock();
  return {
    appender,
    redis,
    keys,
    logged,
    stored,
    sealed,
    rollbacks,
    treeBehindCount: () => treeBehind,
    close: async () => {
      await appender.idle();
      redis.disconnect();
    },
  };
}
