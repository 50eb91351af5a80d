/**
 * An upstream failure in words an agent or operator can act on: fetch says only "fetch
 * failed", and the reason (ECONNREFUSED, a timeout) is in its cause, or in the cause's
 * cause when the SDK wraps it ("Version negotiation probe failed").
 */
export function failureText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const detail = detailOf(err.cause);
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message;
}

/** Most causes read: a cause chain is short, and this bounds a cyclic one. */
const MAX_CAUSES = 5;

function detailOf(cause: unknown): string {
  let message = '';
  for (let depth = 0; depth < MAX_CAUSES && typeof cause === 'object' && cause !== null; depth++) {
    const { code, message: text } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return code;
    if (!message && typeof text === 'string') message = text;
    cause = (cause as { cause?: unknown }).cause;
  }
  return message;
}
