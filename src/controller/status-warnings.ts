import {
  OUTSIDE_DELEGATION_CONDITION,
  type ObjectStatusBody,
  type StatusCondition,
} from './desired-status.js';
import type { RawObject } from './resources.js';

/** A Warning event to record about an object. */
export interface StatusWarning {
  reason: string;
  message: string;
}

/**
 * The Warning events a status write calls for: one when the object becomes (or stays, at
 * a new generation) rejected, one when a namespaced object starts naming capabilities its
 * Delegation does not cover (or names others, or at a new generation). Nothing for a
 * status that only repeats what the object already said, so resyncs record nothing.
 */
export function statusWarnings(raw: RawObject, desired: ObjectStatusBody): StatusWarning[] {
  const current = raw.status as Partial<ObjectStatusBody> | undefined;
  const generationChanged = current?.observedGeneration !== desired.observedGeneration;
  const isNew = (type: string, next: StatusCondition | undefined, failing: StatusCondition['status']) => {
    if (next === undefined || next.status !== failing) return false;
    const previous = current?.conditions?.find((c) => c.type === type);
    return (
      previous === undefined ||
      previous.status !== failing ||
      previous.reason !== next.reason ||
      (type === OUTSIDE_DELEGATION_CONDITION && previous.message !== next.message) ||
      generationChanged
    );
  };
  const [ready] = desired.conditions;
  const outside = desired.conditions.find((c) => c.type === OUTSIDE_DELEGATION_CONDITION);
  return [
    ...(isNew('Ready', ready, 'False') ? [ready] : []),
    ...(outside && isNew(OUTSIDE_DELEGATION_CONDITION, outside, 'True') ? [outside] : []),
  ].map(({ reason, message }) => ({ reason, message }));
}
