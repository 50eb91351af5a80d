import type { ObjectMeta } from '../model/index.js';
import { compareNames } from './compare-names.js';

/**
 * Orders objects oldest first (creationTimestamp, then name): where two objects claim the
 * same thing, the older one wins. Objects without a (valid) creationTimestamp count as the newest.
 */
export function olderFirst(a: { metadata: ObjectMeta }, b: { metadata: ObjectMeta }): number {
  const diff = createdMs(a) - createdMs(b);
  if (diff !== 0 && !Number.isNaN(diff)) return diff;
  return compareNames(a.metadata.name, b.metadata.name);
}

function createdMs(object: { metadata: ObjectMeta }): number {
  // Stryker disable next-line StringLiteral: any text that is not a date parses to NaN, as '' does.
  const ms = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}
