import { parseNamespacedActorId } from './namespaced-actor-id.js';

/**
 * What a record says about where it belongs: an audit entry, a decision, a pending review.
 * `namespace` is the top-level member namespaced records carry (decisions and entries of
 * namespaced actors, configuration entries of namespaced objects); `event_type` and
 * `actor_id` let records written before it still be placed.
 */
export interface PlaceableRecord {
  namespace?: string | null;
  event_type?: string;
  actor_id?: string | null;
}

/** Events whose actor_id is the decision's actor (the decision, its reviews, its execution). */
const DECISION_EVENT = /^governance\./;

/**
 * The namespace a record belongs to, undefined for none: cluster actors' decisions,
 * configuration of cluster kinds, checkpoints and other system entries. A configuration
 * entry's actor_id is the caller who changed it, so only decision events are placed by it.
 */
export function recordNamespace(record: PlaceableRecord): string | undefined {
  if (typeof record.namespace === 'string') return record.namespace;
  if (record.actor_id && (record.event_type === undefined || DECISION_EVENT.test(record.event_type)))
    return parseNamespacedActorId(record.actor_id)?.namespace;
  return undefined;
}
