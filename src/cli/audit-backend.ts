import type { Logger } from 'pino';
import type { AuditLog, RollbackReport } from '../audit/audit-log.js';
import { FileCheckpointStore, openFileAuditLog } from '../audit/file/index.js';
import { ConfigMapCheckpointStore } from '../audit/kube/index.js';
import { openRedisAuditLog } from '../audit/redis/index.js';
import { CoreV1Api } from '@kubernetes/client-node';
import type { CheckpointStore } from '../audit/audit-log.js';
import { loadKubeConfig } from './kube-config.js';
import { Backoff, type BackoffSettings } from '../controller/backoff.js';
import { AuditUnavailableError } from '../model/index.js';
import type { ServeOptions } from './serve-options.js';
import { readFile } from 'node:fs/promises';
import type { CheckpointEvents, CheckpointSigning } from '../audit/checkpoint-signer.js';
import { ROLE_KEY, roleOf } from '../audit/note/key-role.js';
import { isValidKeyName, type NoteSigningKey, parseSigningKey } from '../audit/note/note-keys.js';
import { HttpWitness } from '../audit/witnessing/http-witness.js';
import { UsageError } from './command-line.js';
import { verifierKeyArg } from './verifier-key-arg.js';
import { ArbiterError } from '../model/index.js';
import { errorText } from '../model/error-text.js';

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
  onWaiting: (reason: string) => void = () => undefined,
  events: CheckpointEvents & { rolledBack?: (rollback: RollbackReport) => void } = {},
): Promise<AuditLog> {
  const auditLogger = logger.child({ component: 'audit' });
  const signing = await readSigning(options.auditSigning, events);
  if (signing)
    auditLogger.info(
      {
        origin: signing.origin,
        key_id: signing.key.keyId.toString(16).padStart(8, '0'),
        witnesses: options.auditSigning?.witnesses.map((w) => w.url),
      },
      'audit checkpoints are signed',
    );
  if (options.redis) {
    const { redis } = options;
    return untilReachable(
      () => openRedis(options, redis, auditLogger, isLeader, signing, events.rolledBack),
      auditLogger,
      onWaiting,
    );
  }
  return openFileAuditLog({
    dir: options.dataDir,
    checkpointEvery: options.checkpointEvery,
    retainCheckpoints: RETAIN_CHECKPOINTS,
    logger: auditLogger,
    ...(signing ? { signing } : {}),
  });
}

/**
 * The key of --audit-signing-key, which signs the audit checkpoints and the receipts of
 * forwarded MCP calls; a bad file stops the start with the reason.
 */
async function readAuditSigningKey(keyFile: string): Promise<NoteSigningKey> {
  let text: string;
  try {
    text = await readFile(keyFile, 'utf8');
  } catch (err) {
    throw new ArbiterError('INVALID_REQUEST', `--audit-signing-key: cannot read ${errorText(err)}`);
  }
  let key;
  try {
    key = parseSigningKey(text);
  } catch (err) {
    throw new ArbiterError('INVALID_REQUEST', `--audit-signing-key: ${keyFile}: ${(err as Error).message}`);
  }
  if (roleOf(key) !== 'log') {
    throw new ArbiterError(
      'INVALID_REQUEST',
      `--audit-signing-key: ${keyFile} holds ${key.name}, ${ROLE_KEY.witness}: a log signs its checkpoints with a log key (arbiter audit keygen without --witness)`,
    );
  }
  return key;
}

/** What signs the receipts of forwarded MCP calls: the audit signing key, when there is one. */
export async function readReceiptSigning(options: ServeOptions): Promise<{ receiptKey?: NoteSigningKey }> {
  return options.auditSigning ? { receiptKey: await readAuditSigningKey(options.auditSigning.keyFile) } : {};
}

/** The checkpoint signing of --audit-signing-key. */
async function readSigning(
  options: ServeOptions['auditSigning'],
  events: CheckpointEvents,
): Promise<CheckpointSigning | undefined> {
  if (!options) return undefined;
  const key = await readAuditSigningKey(options.keyFile);
  const origin = options.origin ?? key.name;
  if (!isValidKeyName(origin) || origin !== origin.trim()) {
    throw new ArbiterError('INVALID_REQUEST', `--audit-origin: "${origin}" is not a valid origin line`);
  }
  const witnesses = await Promise.all(options.witnesses.map(readWitness));
  return { key, origin, witnesses, events };
}

/** One --witness with its --witness-vkey; a log key given as a witness key stops the start. */
async function readWitness({ url, vkey }: { url: string; vkey: string }): Promise<HttpWitness> {
  let key;
  try {
    key = await verifierKeyArg(vkey, { flag: '--witness-vkey', role: 'witness' });
  } catch (err) {
    if (err instanceof UsageError) {
      throw new ArbiterError(
        'INVALID_REQUEST',
        `${err.message} (make one with arbiter audit keygen --witness)`,
      );
    }
    throw new ArbiterError('INVALID_REQUEST', `--witness-vkey ${vkey}: ${(err as Error).message}`);
  }
  return new HttpWitness({ url, key });
}

const REDIS_RETRY: BackoffSettings = { initialDelayMs: 500, maxDelayMs: 10_000, factor: 2, jitter: 0.2 };

/**
 * Redis may come up after us (a fresh install, a restarted node): wait for it, retrying
 * with backoff, instead of exiting into a crash loop whose delays keep growing. Meanwhile
 * the port answers not ready (serve.ts). Other failures (a file log) still end the start.
 */
async function untilReachable(
  open: () => Promise<AuditLog>,
  logger: Logger,
  onWaiting: (reason: string) => void,
): Promise<AuditLog> {
  const backoff = new Backoff(REDIS_RETRY);
  for (;;) {
    try {
      return await open();
    } catch (err) {
      if (!(err instanceof AuditUnavailableError)) throw err;
      const delayMs = backoff.nextDelayMs();
      const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
      const reason = `${err.message}${cause}`;
      onWaiting(`waiting for the Redis audit log (${reason})`);
      logger.warn({ err, retry_in_ms: delayMs }, 'Redis audit log unreachable: not ready, retrying');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

function openRedis(
  options: ServeOptions,
  redis: NonNullable<ServeOptions['redis']>,
  auditLogger: Logger,
  isLeader: () => boolean,
  signing: CheckpointSigning | undefined,
  rolledBack: ((rollback: RollbackReport) => void) | undefined,
): Promise<AuditLog> {
  return openRedisAuditLog({
    ...(rolledBack ? { onRollback: rolledBack } : {}),
    redis: redis.url,
    appendTimeoutMs: redis.appendTimeoutMs,
    ...(redis.waitReplicas > 0
      ? { waitReplicas: { count: redis.waitReplicas, timeoutMs: redis.appendTimeoutMs } }
      : {}),
    checkpoints: {
      store: checkpointStore(options),
      isLeader,
      everyEntries: options.checkpointEvery.entries,
      intervalMs: options.checkpointEvery.seconds * 1000,
      ...(signing ? { signing } : {}),
    },
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
