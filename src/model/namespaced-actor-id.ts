import { ArbiterError } from './errors.js';

/** A Kubernetes namespace name: an RFC 1123 label. */
export const NAMESPACE_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const NAMESPACE_NAME_MAX_LENGTH = 63;
/** So that `namespace/localId` stays within the 256 characters of any actor id. */
export const LOCAL_ACTOR_ID_MAX_LENGTH = 256 - NAMESPACE_NAME_MAX_LENGTH - 1;
/** A local actor id: anything but a slash, which separates it from its namespace. */
export const LOCAL_ACTOR_ID_PATTERN = '^[^/]+$';

const NAMESPACE_NAME = new RegExp(NAMESPACE_NAME_PATTERN);
const LOCAL_ACTOR_ID = new RegExp(LOCAL_ACTOR_ID_PATTERN);

export interface NamespacedActor {
  namespace: string;
  localId: string;
}

/** The actor a NamespacedActorGrant in `namespace` with spec.actor.id `localId` defines. */
export function namespacedActorId(namespace: string, localId: string): string {
  if (!isNamespaceName(namespace))
    throw new ArbiterError('INVALID_REQUEST', `${JSON.stringify(namespace)} is not a namespace name`);
  if (!isLocalActorId(localId))
    throw new ArbiterError(
      'INVALID_REQUEST',
      `local actor id must be 1 to ${LOCAL_ACTOR_ID_MAX_LENGTH} characters without "/", got ${JSON.stringify(localId)}`,
    );
  return `${namespace}/${localId}`;
}

/**
 * The namespace and local id of a namespaced actor's id; undefined for a cluster actor.
 * Cluster ActorGrants have always accepted any id, slashes included: such an id keeps
 * naming the same actor (a cluster ActorGrant may grant namespaced actors), and when its
 * first part is a namespace name the actor belongs to that namespace, whose tier, once the
 * namespace has any, applies to it too. Any other id is a cluster actor, as before.
 */
export function parseNamespacedActorId(id: string): NamespacedActor | undefined {
  const slash = id.indexOf('/');
  if (slash === -1) return undefined;
  const namespace = id.slice(0, slash);
  const localId = id.slice(slash + 1);
  return isNamespaceName(namespace) && isLocalActorId(localId) ? { namespace, localId } : undefined;
}

export function isNamespaceName(name: string): boolean {
  return name.length <= NAMESPACE_NAME_MAX_LENGTH && NAMESPACE_NAME.test(name);
}

function isLocalActorId(id: string): boolean {
  return id.length <= LOCAL_ACTOR_ID_MAX_LENGTH && LOCAL_ACTOR_ID.test(id);
}
