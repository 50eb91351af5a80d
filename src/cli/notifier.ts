import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectRedis } from '../redis/redis-connection.js';
import { DEFAULT_KEY_PREFIX } from '../audit/redis/redis-keys.js';
import { FileDeliveryCursors, RedisDeliveryCursors } from '../notify/delivery-cursors.js';
import { Notifier, type NotifierDeps } from '../notify/notifier.js';
import type { NotifyOptions } from './notify-options.js';
import type { ServeOptions } from './serve-options.js';

/** One POST may take this long; a receiver slower than that is retried. */
const POST_TIMEOUT_MS = 5000;
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15_000;
const SAVE_INTERVAL_MS = 1000;

/**
 * The webhook notifier of `--notify-url`: progress kept beside the audit log (the data
 * folder, or the Redis the replicas share), the signing secret read from its file.
 */
export async function openNotifier(
  options: ServeOptions,
  notify: NotifyOptions,
  deps: Omit<NotifierDeps, 'receivers' | 'cursors' | 'saveIntervalMs'>,
): Promise<Notifier> {
  const secret = notify.secretFile ? await readSecret(notify.secretFile) : undefined;
  const cursors = options.redis
    ? new RedisDeliveryCursors(
        connectRedis(options.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 }),
        `${DEFAULT_KEY_PREFIX}:notify:cursors`,
      )
    : new FileDeliveryCursors(join(options.dataDir, 'notify-cursors.json'));
  const receivers = notify.urls.map((url) => ({
    url,
    format: notify.format,
    secret,
    retryWindowMs: notify.retrySeconds * 1000,
    timeoutMs: POST_TIMEOUT_MS,
    minBackoffMs: MIN_BACKOFF_MS,
    maxBackoffMs: MAX_BACKOFF_MS,
  }));
  deps.logger.info(
    { receivers: receivers.length, format: notify.format, signed: secret !== undefined },
    'notifications: webhook receivers configured',
  );
  return new Notifier({ ...deps, receivers, cursors, saveIntervalMs: SAVE_INTERVAL_MS });
}

/** The file's bytes without a trailing newline (what `echo > file` or a Secret adds). */
async function readSecret(file: string): Promise<Buffer> {
  const text = (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
  if (text.length === 0) throw new Error(`--notify-secret-file ${file} is empty`);
  return Buffer.from(text, 'utf8');
}
