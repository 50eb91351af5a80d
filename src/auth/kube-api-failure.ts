import { ApiException } from '@kubernetes/client-node';

/** The Status message of a refusal, if the body has one (never the request, so never the token). */
function statusMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      // Not JSON (a proxy's error page?): a string has no message.
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? `: ${message.slice(0, 512)}` : '';
}

/**
 * What a failed review call rethrows: for an HTTP refusal only its status and the API
 * server's message (the exception could carry request details, such as the token);
 * anything else (a refused connection) as it is.
 */
export function reviewFailure(review: string, err: unknown): unknown {
  if (err instanceof ApiException)
    return new Error(`${review} answered HTTP ${err.code}${statusMessage(err.body)}`);
  return err;
}
