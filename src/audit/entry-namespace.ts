import { recordNamespace, type PlaceableRecord } from '../model/index.js';

/**
 * The namespace an entry belongs to, null for none: the `namespace` it was written with
 * (decisions, reviews and executions of namespaced actors; configuration of namespaced
 * objects), else, for decision events written before entries carried one, its actor's.
 */
export function entryNamespace(entry: PlaceableRecord): string | null {
  return recordNamespace(entry) ?? null;
}

/** The namespace member a decision event of this actor is written with: none for a cluster actor. */
export function actorNamespaceMember(actorId: string | null): { namespace?: string } {
  const namespace = actorId === null ? undefined : recordNamespace({ actor_id: actorId });
  return namespace === undefined ? {} : { namespace };
}
