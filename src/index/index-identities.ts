import {
  objectKey,
  qualifiedName,
  subjectUsername,
  type ActorGrantObject,
  type ActorType,
  type NamespacedActorGrantObject,
} from '../model/index.js';
import { olderFirst } from './older-first.js';

/** A Kubernetes identity bound to an actor by an ActorGrant's spec.actor.subjects. */
export interface IdentityBinding {
  readonly username: string;
  readonly actorId: string;
  /** The binding ActorGrant's spec.actor.type, when it names one. */
  readonly actorType: ActorType | undefined;
  /** The ActorGrant that binds it (`namespace/name` for a NamespacedActorGrant). */
  readonly source: string;
}

/** Why an ActorGrant lost: the identity, and where it names it. */
export interface IdentityConflict {
  message: string;
  /** `spec.actor.subjects[i]`. */
  field: string;
}

export interface IndexedIdentities {
  /** By username (`system:serviceaccount:<ns>:<name>` or a user's name). */
  bindings: Map<string, IdentityBinding>;
  /** ActorGrants (by objectKey) that bind an identity already bound to another actor. */
  conflicts: Map<string, IdentityConflict>;
}

/**
 * An ActorGrant, or a NamespacedActorGrant whose spec.actor.id is already the namespaced
 * actor's (`N/bot`) and whose subjects passed namespacedSubjects.
 */
export type ResolvedGrantObject = ActorGrantObject | NamespacedActorGrantObject;

/**
 * Binds identities to actors, older ActorGrant first (creationTimestamp, then name): one
 * identity bound to two different actors is a conflict that the older ActorGrant wins;
 * the newer one is not used at all (a half-used ActorGrant would grant less than it says).
 * Cluster and namespaced grants compete alike: a ServiceAccount is one actor or none.
 */
export function indexIdentities(objects: readonly ResolvedGrantObject[]): IndexedIdentities {
  const bindings = new Map<string, IdentityBinding>();
  const conflicts = new Map<string, IdentityConflict>();
  const kindOf = new Map<string, ResolvedGrantObject['kind']>();
  for (const object of [...objects].sort(olderFirst)) {
    const actorId = object.spec.actor.id;
    const usernames = (object.spec.actor.subjects ?? []).map(subjectUsername);
    const index = usernames.findIndex((username) => {
      const held = bindings.get(username);
      return held !== undefined && held.actorId !== actorId;
    });
    if (index >= 0) {
      const taken = bindings.get(usernames[index]!)!;
      conflicts.set(objectKey(object), {
        message: `identity ${taken.username} is already bound to actor ${taken.actorId} by the older ${kindOf.get(taken.username)} ${taken.source}`,
        field: `spec.actor.subjects[${index}]`,
      });
      continue;
    }
    for (const username of usernames) {
      if (bindings.has(username)) continue;
      bindings.set(username, {
        username,
        actorId,
        actorType: object.spec.actor.type,
        source: qualifiedName(object),
      });
      kindOf.set(username, object.kind);
    }
  }
  return { bindings, conflicts };
}
