/**
 * Typed errors with stable codes. Only api/error-handler.ts maps them to HTTP status.
 */
export const ERROR_CODES = [
  'INVALID_REQUEST',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'ACTOR_MISMATCH',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class ArbiterError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ArbiterError';
  }
}

/** The audit log could not store an entry: the request must fail closed. */
export class AuditUnavailableError extends ArbiterError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, undefined, options);
    this.name = 'AuditUnavailableError';
  }
}
