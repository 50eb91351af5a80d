import { ArbiterError } from '../../model/index.js';

/**
 * A certificate, key or bundle that cannot be used: unparsable PEM, a key that does not
 * belong to its certificate, an expired CA. The message says which input and why.
 */
export class InvalidCertificateError extends ArbiterError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_REQUEST', message, undefined, options);
    this.name = 'InvalidCertificateError';
  }
}

/** An InvalidCertificateError for `what`, carrying the parser's own message and the cause. */
export function invalidCertificate(what: string, err: unknown): InvalidCertificateError {
  const reason = err instanceof Error ? err.message : String(err);
  return new InvalidCertificateError(`${what}: ${reason}`, { cause: err });
}
