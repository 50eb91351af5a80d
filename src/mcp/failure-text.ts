/**
 * An upstream failure in words an agent or operator can act on: fetch says only "fetch
 * failed", and the reason (ECONNREFUSED, a timeout) is in its cause.
 */
export function failureText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message;
}
