import { PluginError } from './plugin-error.js';

/** The error body src/api/error-handler.ts sends: `{error: {code, message, request_id}}`. */
interface ErrorBody {
  error?: { code?: unknown; message?: unknown; request_id?: unknown };
}

/** Arbiter answered with an error status; `status` lets a command fall back (get without audit:read). */
export class ServerRefusal extends PluginError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ServerRefusal';
  }
}

/** What the status means to someone at a terminal, before the server's own words. */
const MEANING_BY_STATUS: Record<number, string> = {
  400: 'Arbiter refused the request',
  401: 'Arbiter did not accept the token',
  403: 'not allowed',
  404: 'not found',
  409: 'conflict',
  503: 'Arbiter is unavailable',
};

/** What to do next, where there is something obvious. */
const HINT_BY_STATUS: Record<number, string> = {
  401: 'check --token, ARBITER_TOKEN or the kubeconfig user',
  503: 'try again shortly',
};

/**
 * An error response of Arbiter as one line: the meaning of the status, the server's
 * code and message, and a hint, e.g.
 * `conflict (409 CONFLICT): decision 9b0c... is already approved`.
 */
export function serverRefusal(status: number, statusText: string, body: unknown): ServerRefusal {
  const error = (body as ErrorBody | undefined)?.error;
  const code = typeof error?.code === 'string' ? ` ${error.code}` : '';
  const message =
    typeof error?.message === 'string' ? error.message : textOf(body) || statusText || 'no explanation';
  const meaning = MEANING_BY_STATUS[status] ?? `Arbiter answered ${status}`;
  const hint = HINT_BY_STATUS[status] ?? (isMissingRoute(status, message) ? olderServerHint : undefined);
  return new ServerRefusal(`${meaning} (${status}${code}): ${message}${hint ? `; ${hint}` : ''}`, status);
}

const olderServerHint = 'the server may be older than this plugin';

/** No route for the path (404), or none for the method (405): src/api/error-handler.ts. */
function isMissingRoute(status: number, message: string): boolean {
  return status === 405 || (status === 404 && message.startsWith('no route for'));
}

/** A body that is not Arbiter's JSON (a proxy's page, say): its first line, kept short. */
function textOf(body: unknown): string {
  if (typeof body !== 'string') return '';
  const firstLine = body.trim().split('\n')[0] ?? '';
  return firstLine.length > 200 ? `${firstLine.slice(0, 200)}...` : firstLine;
}
