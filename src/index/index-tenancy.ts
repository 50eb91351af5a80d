import {
  objectKey,
  type ConfigObject,
  type DelegationObject,
  type NamespacedActorGrantObject,
  type NamespacedPolicyObject,
} from '../model/index.js';
import type { ArtefactCache } from './artefact-cache.js';
import { compareNames } from './compare-names.js';
import { outsideDelegation } from './delegation-coverage.js';
import { indexDelegations } from './index-delegations.js';
import type { IdentityConflict, ResolvedGrantObject } from './index-identities.js';
import { indexGrants } from './index-grants.js';
import { indexPolicies } from './index-policies.js';
import type { CompiledRule, IndexedCapability } from './indexed-types.js';
import { namespacedSubjects } from './namespaced-subjects.js';
import type { ObjectStatuses } from './object-statuses.js';
import type { TenancySlices } from './tenancy-slices.js';

/**
 * NamespacedActorGrants as the index uses them: spec.actor.id the namespaced actor's
 * (`N/bot`), subjects with their namespace. A grant binding a foreign subject is left out
 * (Ready=False, ForeignSubject): it must not bind, nor grant, anything.
 */
export function resolveNamespacedGrants(
  objects: readonly NamespacedActorGrantObject[],
  statuses: ObjectStatuses,
): NamespacedActorGrantObject[] {
  return objects.flatMap((object) => {
    const { namespace } = object.metadata;
    const subjects = namespacedSubjects(namespace, object.spec.actor.subjects);
    if (!subjects.ok) {
      statuses.set(object, subjects.reason, `${subjects.message}; this grant is not used`, subjects.field);
      return [];
    }
    const { actor } = object.spec;
    // validateConfigObject checked both parts: a namespace name and a local id without "/".
    const resolved = { ...actor, id: `${namespace}/${actor.id}` };
    if (actor.subjects !== undefined) resolved.subjects = subjects.subjects;
    return [{ ...object, spec: { ...object.spec, actor: resolved } }];
  });
}

export interface TenancyInputs {
  delegations: readonly DelegationObject[];
  policies: readonly NamespacedPolicyObject[];
  /** From resolveNamespacedGrants. */
  grants: readonly NamespacedActorGrantObject[];
  /** Grants (by objectKey) that lost an identity to an older one, cluster or namespaced. */
  identityConflicts: ReadonlyMap<string, IdentityConflict>;
}

/**
 * The tenancy slices: Delegations by namespace, NamespacedPolicies compiled by the same
 * code as Policies, per namespace, and NamespacedActorGrants by actor, with their statuses
 * (OutsideDelegation where they name capabilities the namespace may not govern).
 */
export function indexTenancy(
  inputs: TenancyInputs,
  cache: ArtefactCache,
  statuses: ObjectStatuses,
  capabilities: ReadonlyMap<string, IndexedCapability>,
): TenancySlices {
  const delegations = indexDelegations(inputs.delegations);
  for (const object of inputs.delegations) {
    const conflict = delegations.conflicts.get(object.metadata.name);
    if (conflict)
      statuses.set(object, 'Conflict', `${conflict.message}; this Delegation is not used`, conflict.field);
    else statuses.set(object, 'Accepted', `delegates ${object.spec.namespaces.join(', ')}`);
  }
  const riskOf = (name: string) => capabilities.get(name)?.spec.riskLevel;
  const markOutside = (object: ConfigObject & { metadata: { namespace: string } }, names: string[]) => {
    const { namespace } = object.metadata;
    const message = outsideDelegation(delegations.byNamespace.get(namespace), namespace, names, riskOf);
    if (message !== undefined) statuses.markOutsideDelegation(object, message);
  };

  const namespaceRules = new Map<string, ReadonlyMap<string, readonly CompiledRule[]>>();
  for (const [namespace, objects] of byNamespace(inputs.policies)) {
    namespaceRules.set(namespace, indexPolicies(objects, cache, statuses, capabilities).rules);
    for (const object of objects)
      markOutside(
        object,
        object.spec.rules.map((r) => r.capability),
      );
  }

  const isCapability = (name: string) => capabilities.has(name);
  const grants: ResolvedGrantObject[] = [...inputs.grants];
  const namespacedGrantsByActor = indexGrants(grants, statuses, isCapability, inputs.identityConflicts);
  for (const object of inputs.grants)
    if (!inputs.identityConflicts.has(objectKey(object)))
      markOutside(
        object,
        object.spec.grants.map((g) => g.capability),
      );

  return { delegations: delegations.byNamespace, namespaceRules, namespacedGrantsByActor };
}

function byNamespace<T extends { metadata: { namespace: string } }>(objects: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const object of objects) {
    const list = groups.get(object.metadata.namespace);
    if (list) list.push(object);
    else groups.set(object.metadata.namespace, [object]);
  }
  return new Map([...groups].sort(([a], [b]) => compareNames(a, b)));
}
