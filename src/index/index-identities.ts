import { subjectUsername, type ActorGrantObject, type ActorType } from '../model/index.js';
import { olderFirst } from './older-first.js';

/** A Kubernetes identity bound to an actor by an ActorGrant's spec.actor.subjects. */
export interface IdentityBinding {
  readonly username: string;
  readonly actorId: string;
  /** The binding ActorGrant's spec.actor.type, when it names one. */
  readonly actorType: ActorType | undefined;
  /** The ActorGrant that binds it. */
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
  /** ActorGrants (by name) that bind an identity already bound to another actor. */
  conflicts: Map<string, IdentityConflict>;
}

/**
 * Binds identities to actors, older ActorGrant first (creationTimestamp, then name): one
 * identity bound to two different actors is a conflict that the older ActorGrant wins;
 * the newer one is not used at all (a half-used ActorGrant would grant less than it says).
 */
export function indexIdentities(objects: readonly ActorGrantObject[]): IndexedIdentities {
  const bindings = new Map<string, IdentityBinding>();
  const conflicts = new Map<string, IdentityConflict>();
  for (const object of [...objects].sort(olderFirst)) {
    const actorId = object.spec.actor.id;
    const usernames = (object.spec.actor.subjects ?? []).map(subjectUsername);
    const index = usernames.findIndex((username) => {
      const held = bindings.get(username);
      return held !== undefined && held.actorId !== actorId;
    });
    if (index >= 0) {
      const taken = bindings.get(usernames[index]!)!;
      conflicts.set(object.metadata.name, {
        message: `identity ${taken.username} is already bound to actor ${taken.actorId} by the older ActorGrant ${taken.source}`,
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
        source: object.metadata.name,
      });
    }
  }
  return { bindings, conflicts };
}
