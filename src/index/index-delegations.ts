import type { DelegationObject } from '../model/index.js';
import { compareNames } from './compare-names.js';
import type { IdentityConflict } from './index-identities.js';
import type { IndexedDelegation } from './indexed-types.js';
import { olderFirst } from './older-first.js';

export interface IndexedDelegations {
  /** The Delegation of each namespace, by namespace name (sorted). */
  byNamespace: Map<string, IndexedDelegation>;
  /** Delegations (by name) that list a namespace an older one lists: not used at all. */
  conflicts: Map<string, IdentityConflict>;
}

/**
 * One Delegation per namespace. Where two list the same namespace, the older (creation
 * time, then name) wins and the newer is not used at all: used for its other namespaces
 * only, it would delegate less than it says, and which of two budgets or risk levels a
 * namespace has must never depend on the order objects arrived in.
 */
export function indexDelegations(objects: readonly DelegationObject[]): IndexedDelegations {
  const byNamespace = new Map<string, IndexedDelegation>();
  const conflicts = new Map<string, IdentityConflict>();
  for (const object of [...objects].sort(olderFirst)) {
    const { name } = object.metadata;
    const taken = object.spec.namespaces.findIndex((ns) => byNamespace.has(ns));
    if (taken !== -1) {
      const ns = object.spec.namespaces[taken]!;
      conflicts.set(name, {
        field: `spec.namespaces[${taken}]`,
        message: `namespace ${ns} is already delegated by Delegation ${byNamespace.get(ns)!.name}`,
      });
      continue;
    }
    for (const ns of object.spec.namespaces) byNamespace.set(ns, { name, spec: object.spec });
  }
  return { byNamespace: new Map([...byNamespace].sort(([a], [b]) => compareNames(a, b))), conflicts };
}
