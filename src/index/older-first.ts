import type { ConfigObject } from '../model/index.js';

/**
 * Orders objects oldest first (creationTimestamp, then name): where two objects claim the
 * same thing, the older one wins. Objects without a (valid) creationTimestamp count as the newest.
 */
export function olderFirst(a: ConfigObject, b: ConfigObject): number {
  const diff = createdMs(a) - createdMs(b);
  if (diff !== 0 && !Number.isNaN(diff)) return diff;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

function createdMs(object: ConfigObject): number {
  const ms = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}
