import { UsageError } from './command-line.js';
import type { NotifyFormat } from '../notify/receiver-queue.js';
import { urlOf } from './url-arg.js';

/** `--notify-*`: webhook receivers told of pending decisions, their verdicts, a broken chain. */
export interface NotifyOptions {
  urls: string[];
  format: NotifyFormat;
  /** The HMAC key of X-Arbiter-Signature, read from this file. */
  secretFile: string | undefined;
  /** How long after its event a notification is retried. */
  retrySeconds: number;
}

export interface NotifyFlags {
  'notify-url'?: string[];
  'notify-format'?: string;
  'notify-secret-file'?: string;
  'notify-retry'?: string;
}

export const NOTIFY_HELP = `Notifications (webhooks):
  --notify-url URL         POST a JSON event to URL for decision.pending, .approved,
                           .denied, .expired and audit.chain_broken; repeatable
  --notify-format F        json (default) or slack (an incoming-webhook message)
  --notify-secret-file F   sign each body: X-Arbiter-Signature: sha256=<HMAC-SHA256>
  --notify-retry S         retry a delivery for up to S seconds after its event
                           (default: 600)
`;

const FORMATS: readonly NotifyFormat[] = ['json', 'slack'];

export function notifyOptions(values: NotifyFlags): NotifyOptions | undefined {
  const urls = values['notify-url'] ?? [];
  if (urls.length === 0) {
    const given = (['notify-format', 'notify-secret-file', 'notify-retry'] as const).find(
      (flag) => values[flag] !== undefined,
    );
    if (given) throw new UsageError(`--${given} needs --notify-url URL`);
    return undefined;
  }
  urls.forEach(requireHttpUrl);
  const format = (values['notify-format'] ?? 'json') as NotifyFormat;
  if (!FORMATS.includes(format)) throw new UsageError(`--notify-format: use json or slack, not "${format}"`);
  const retry = values['notify-retry'];
  const retrySeconds = retry === undefined ? 600 : Number(retry);
  if (!Number.isFinite(retrySeconds) || retrySeconds <= 0)
    throw new UsageError(`--notify-retry: ${retry} is not a valid value`);
  return { urls, format, secretFile: values['notify-secret-file'], retrySeconds };
}

function requireHttpUrl(url: string): void {
  const protocol = urlOf(url)?.protocol;
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new UsageError(`--notify-url: "${url}" is not an http(s) URL`);
}
