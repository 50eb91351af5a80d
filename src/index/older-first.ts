import type { ObjectMeta } from '../model/index.js';
import { compareNames } from './compare-names.js';

/**
 * Orders objects oldest first (creationTimestamp, then name, then namespace, cluster objects
 * first): where two objects claim the same thing, the older one wins, and a tie never
 * depends on the order the objects arrived in. Objects without a (valid) creationTimestamp
 * count as the newest.
 */
export function olderFirst(a: { metadata: ObjectMeta }, b: { metadata: ObjectMeta }): number {
  const diff = createdMs(a) - createdMs(b);
  if (diff !== 0 && !Number.isNaN(diff)) return diff;
  return compareNames(a.metadata.name, b.metadata.name) || compareNamespaces(a.metadata, b.metadata);
}

function compareNamespaces(a: ObjectMeta, b: ObjectMeta): number {
  if (a.namespace === undefined || b.namespace === undefined)
    return Number(a.namespace !== undefined) - Number(b.namespace !== undefined);
  return compareNames(a.namespace, b.namespace);
}

function createdMs(object: { metadata: ObjectMeta }): number {
  // Stryker disable next-line StringLiteral: any text that is not a date parses to NaN, as '' does.
  const ms = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}
