import { AuditUnavailableError } from '../../model/index.js';

/**
 * The append was rejected (the caller fails closed, 503) but its outcome in Redis is
 * not known: the reply was lost, or the entry is stored on the primary and replicas did
 * not confirm it in time. Such an entry may be in the chain; the log settles it later
 * and logs what it found.
 */
export class AuditAppendInDoubtError extends AuditUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuditAppendInDoubtError';
  }
}
