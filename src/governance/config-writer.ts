import type {
  ActorGrantObject,
  ActorType,
  CapabilityObject,
  CapabilitySpec,
  GrantSpec,
  NamespacedActorGrantObject,
  NamespacedPolicyObject,
  ObjectStatus,
  PolicyObject,
  PolicySpec,
} from '../model/index.js';

/** Annotation recording who last changed an object through the API. */
export const CHANGED_BY_ANNOTATION = 'governance.arbiter.dev/changed-by';
/**
 * Annotations the API sets on an object just before deleting it (a revoke that empties an
 * ActorGrant), so the deletion is audited with its caller: the final state in the watch's
 * delete event carries them. The time keeps a stale pair (a delete that then failed)
 * from being credited with a later kubectl delete.
 */
export const DELETED_BY_ANNOTATION = 'governance.arbiter.dev/deleted-by';
export const DELETED_AT_ANNOTATION = 'governance.arbiter.dev/deleted-at';

export interface Written<T> {
  object: T;
  status: ObjectStatus | undefined;
  created: boolean;
}

/**
 * Policies and grants are written at cluster scope (namespace undefined: Policy,
 * ActorGrant) or in a namespace (NamespacedPolicy, NamespacedActorGrant, whose actor id
 * is the local one, `bot` for `team-a/bot`): one write path for both (issue #38).
 */
export type AnyPolicyObject = PolicyObject | NamespacedPolicyObject;
export type AnyActorGrantObject = ActorGrantObject | NamespacedActorGrantObject;

export function policyKind(namespace: string | undefined): AnyPolicyObject['kind'] {
  return namespace === undefined ? 'Policy' : 'NamespacedPolicy';
}

export function grantKind(namespace: string | undefined): AnyActorGrantObject['kind'] {
  return namespace === undefined ? 'ActorGrant' : 'NamespacedActorGrant';
}

/** `name`, or `namespace/name` for an object (or actor) of a namespace: how messages name it. */
export function namedIn(name: string, namespace: string | undefined): string {
  return namespace === undefined ? name : `${namespace}/${name}`;
}

/**
 * Configuration writes of the API. The embedded store and the Kubernetes one implement
 * it; each answers only once the change is in this process's index (read-your-writes).
 */
export interface ConfigWriter {
  registerCapability(spec: CapabilitySpec, caller: string): Promise<Written<CapabilityObject>>;
  createPolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>>;
  updatePolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>>;
  grant(
    actor: { id: string; type?: ActorType },
    grant: GrantSpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyActorGrantObject>>;
  /**
   * Removes the capability from every grant object of the actor (of the namespace's
   * NamespacedActorGrants when given); resolves to how many grants went.
   */
  revoke(actorId: string, capability: string, caller: string, namespace?: string): Promise<number>;
  deletePolicy(name: string, caller: string, namespace?: string): Promise<void>;
  /**
   * Deletes every object claiming the capability `name` (spec.name), refused (CONFLICT)
   * while a grant or policy rule names it; resolves to the deleted objects' names.
   */
  deleteCapability(name: string, caller: string): Promise<string[]>;
}
