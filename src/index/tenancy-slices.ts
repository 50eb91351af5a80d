import type { CompiledRule, IndexedDelegation, IndexedGrant } from './indexed-types.js';

/**
 * What the engine reads of the tenancy kinds (issue #38), each slice keyed the way a
 * decision looks it up. Empty until the index builds it from Delegation, NamespacedPolicy
 * and NamespacedActorGrant objects.
 */
export interface TenancySlices {
  /** The Delegation that lists a namespace, by namespace. */
  readonly delegations: ReadonlyMap<string, IndexedDelegation>;
  /**
   * Compiled rules of a namespace's enabled, valid NamespacedPolicies, by namespace then
   * capability; each rule's `policy` is `namespace/name`, sorted as cluster rules are.
   */
  readonly namespaceRules: ReadonlyMap<string, ReadonlyMap<string, readonly CompiledRule[]>>;
  /** Grants of NamespacedActorGrants, by actor id (`namespace/localId`). */
  readonly namespacedGrantsByActor: ReadonlyMap<string, readonly IndexedGrant[]>;
}

export const NO_TENANCY: TenancySlices = Object.freeze({
  delegations: new Map(),
  namespaceRules: new Map(),
  namespacedGrantsByActor: new Map(),
});
