import type { IndexSnapshot } from './index-snapshot.js';
import type { ConfigObject, ObjectStatus, ReadyReason } from '../model/index.js';

/** Reasons that make an object unusable (as in embedded mode: the audit skips these, API writes are refused). */
const REJECTING_REASONS: ReadonlySet<ReadyReason> = new Set([
  'InvalidSchema',
  'InvalidCondition',
  'InvalidSpec',
  'Conflict',
  'ForeignSubject',
]);

export function isRejected(status: ObjectStatus | undefined): boolean {
  return status !== undefined && REJECTING_REASONS.has(status.reason);
}

/** The objects that take effect: the configuration audit records these. */
export function acceptedObjects(snapshot: IndexSnapshot): ConfigObject[] {
  return snapshot.objects().filter((o) => !isRejected(snapshot.statusOf(o)));
}
