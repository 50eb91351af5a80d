import { kindKey, objectKey, type ConfigObject, type Kind, type ObjectStatus } from '../model/index.js';
import { compareNames } from './compare-names.js';
import type { IdentityBinding } from './index-identities.js';
import type {
  CompiledRule,
  IndexCounts,
  IndexedCapability,
  IndexedDelegation,
  IndexedGrant,
  IndexedPolicy,
  StatusEntry,
} from './indexed-types.js';
import { NO_TENANCY, type TenancySlices } from './tenancy-slices.js';

/** What buildIndex hands to the snapshot; every collection is already sorted. */
export interface SnapshotParts {
  objects: readonly ConfigObject[];
  capabilities: ReadonlyMap<string, IndexedCapability>;
  rules: ReadonlyMap<string, readonly CompiledRule[]>;
  policies: ReadonlyMap<string, IndexedPolicy>;
  grantsByActor: ReadonlyMap<string, readonly IndexedGrant[]>;
  /** Kubernetes identities bound to actors, by username. */
  identities: ReadonlyMap<string, IdentityBinding>;
  statuses: ReadonlyMap<string, StatusEntry>;
  /** Absent: no tenancy objects (NO_TENANCY). */
  tenancy?: TenancySlices;
}

/** The rules one tier decides by: the cluster's, or one namespace's. */
export interface RuleTier {
  readonly namespace: string | undefined;
  readonly rules: ReadonlyMap<string, readonly CompiledRule[]>;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * An immutable view of the configuration with everything compiled. A decision reads one
 * snapshot from start to end, so it never sees half of an update.
 */
export class IndexSnapshot {
  readonly counts: IndexCounts;
  private readonly sortedCapabilities: readonly IndexedCapability[];
  private readonly sortedPolicies: readonly IndexedPolicy[];
  private readonly grantsByPair: ReadonlyMap<string, IndexedGrant[]>;
  private readonly tenancy: TenancySlices;
  private readonly namespacedGrantsByPair: ReadonlyMap<string, IndexedGrant[]>;

  constructor(private readonly parts: SnapshotParts) {
    this.sortedCapabilities = [...parts.capabilities.values()].sort((a, b) => compareNames(a.name, b.name));
    this.grantsByPair = byPair(parts.grantsByActor);
    this.tenancy = parts.tenancy ?? NO_TENANCY;
    this.namespacedGrantsByPair = byPair(this.tenancy.namespacedGrantsByActor);
    this.sortedPolicies = [...parts.policies.values()];
    this.counts = countsOf(parts, this.tenancy);
  }

  /** The capability proposals call `name` (spec.name). */
  capability(name: string): IndexedCapability | undefined {
    return this.parts.capabilities.get(name);
  }

  /** All indexed capabilities, sorted by name. */
  capabilities(): readonly IndexedCapability[] {
    return this.sortedCapabilities;
  }

  /** Compiled rules of enabled, valid policies for a capability, by policy name then rule index. */
  rulesFor(capability: string): readonly CompiledRule[] {
    return this.parts.rules.get(capability) ?? NONE;
  }

  /** Every policy, enabled or not, valid or not, sorted by name, with its status. */
  policies(): readonly IndexedPolicy[] {
    return this.sortedPolicies;
  }

  policy(name: string): IndexedPolicy | undefined {
    return this.parts.policies.get(name);
  }

  /** The actor's grants of one capability, merged over all its ActorGrant objects. */
  grantsFor(actorId: string, capability: string): readonly IndexedGrant[] {
    return this.grantsByPair.get(pairKey(actorId, capability)) ?? NONE;
  }

  /** This snapshot with the tenancy slices given instead of its own. */
  withTenancy(tenancy: TenancySlices): IndexSnapshot {
    return new IndexSnapshot({ ...this.parts, tenancy });
  }

  /** The Delegation that lists `namespace`, if any. */
  delegationOf(namespace: string): IndexedDelegation | undefined {
    return this.tenancy.delegations.get(namespace);
  }

  /** Compiled rules of the namespace's enabled, valid NamespacedPolicies for a capability. */
  namespaceRulesFor(namespace: string, capability: string): readonly CompiledRule[] {
    return this.tenancy.namespaceRules.get(namespace)?.get(capability) ?? NONE;
  }

  /**
   * Each tier's compiled rules by capability: the cluster's (namespace undefined), then each
   * namespace's with NamespacedPolicy rules in use, by namespace name.
   */
  ruleTiers(): readonly RuleTier[] {
    return [
      { namespace: undefined, rules: this.parts.rules },
      ...[...this.tenancy.namespaceRules].map(([namespace, rules]) => ({ namespace, rules })),
    ];
  }

  /** The grants of one capability that NamespacedActorGrants give the actor (before the Delegation gate). */
  namespacedGrantsFor(actorId: string, capability: string): readonly IndexedGrant[] {
    return this.namespacedGrantsByPair.get(pairKey(actorId, capability)) ?? NONE;
  }

  /** All grants NamespacedActorGrants give a namespaced actor (`namespace/localId`), by object then position. */
  namespacedGrantsOfActor(actorId: string): readonly IndexedGrant[] {
    return this.tenancy.namespacedGrantsByActor.get(actorId) ?? NONE;
  }

  /** All grants of an actor, by ActorGrant object name then position. */
  grantsOfActor(actorId: string): readonly IndexedGrant[] {
    return this.parts.grantsByActor.get(actorId) ?? NONE;
  }

  /** Ids of the actors that hold at least one grant, sorted. */
  actors(): readonly string[] {
    return [...this.parts.grantsByActor.keys()];
  }

  /** The actor a Kubernetes username is bound to (ActorGrant spec.actor.subjects), if any. */
  actorOfIdentity(username: string): IdentityBinding | undefined {
    return this.parts.identities.get(username);
  }

  /** Every bound username, sorted. */
  boundIdentities(): readonly string[] {
    return [...this.parts.identities.keys()].sort(compareNames);
  }

  /** The status of an object the snapshot was built from (or of its namesake). */
  statusOf(object: Pick<ConfigObject, 'kind' | 'metadata'>): ObjectStatus | undefined {
    return this.parts.statuses.get(objectKey(object))?.status;
  }

  /** `namespace` counts for the namespaced kinds only. */
  status(kind: Kind, name: string, namespace?: string): ObjectStatus | undefined {
    return this.parts.statuses.get(kindKey(kind, name, namespace))?.status;
  }

  /** The Ready condition of every object the snapshot was built from, by objectKey. */
  statuses(): readonly StatusEntry[] {
    return [...this.parts.statuses.values()];
  }

  /** The objects the snapshot was built from (including those that are not Ready). */
  objects(): readonly ConfigObject[] {
    return this.parts.objects;
  }
}

function byPair(grantsByActor: ReadonlyMap<string, readonly IndexedGrant[]>): Map<string, IndexedGrant[]> {
  const pairs = new Map<string, IndexedGrant[]>();
  for (const grants of grantsByActor.values()) {
    for (const grant of grants) {
      const key = pairKey(grant.actorId, grant.capability);
      const list = pairs.get(key);
      if (list) list.push(grant);
      else pairs.set(key, [grant]);
    }
  }
  return pairs;
}

function pairKey(actorId: string, capability: string): string {
  return `${actorId}\u0000${capability}`;
}

function countsOf(parts: SnapshotParts, tenancy: TenancySlices): IndexCounts {
  const policies = [...parts.policies.values()];
  const ofKind = (kind: Kind) => parts.objects.filter((o) => o.kind === kind).length;
  return {
    capabilities: parts.capabilities.size,
    policies: policies.length,
    enabledPolicies: policies.filter((p) => p.enabled && p.status.reason !== 'InvalidCondition').length,
    rules: sizes(parts.rules.values()),
    actorGrantObjects: ofKind('ActorGrant'),
    grants: sizes(parts.grantsByActor.values()),
    actors: parts.grantsByActor.size,
    boundIdentities: parts.identities.size,
    notReady: [...parts.statuses.values()].filter((s) => !s.status.ready).length,
    delegations: ofKind('Delegation'),
    delegatedNamespaces: tenancy.delegations.size,
    namespacedPolicies: ofKind('NamespacedPolicy'),
    namespacedRules: [...tenancy.namespaceRules.values()].reduce(
      (sum, rules) => sum + sizes(rules.values()),
      0,
    ),
    namespacedActorGrantObjects: ofKind('NamespacedActorGrant'),
    namespacedGrants: sizes(tenancy.namespacedGrantsByActor.values()),
    namespacedActors: tenancy.namespacedGrantsByActor.size,
  };
}

/** The total length of some lists. */
function sizes(lists: Iterable<readonly unknown[]>): number {
  let total = 0;
  for (const list of lists) total += list.length;
  return total;
}
