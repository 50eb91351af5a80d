import {
  objectKey,
  type ActorGrantObject,
  type CapabilityObject,
  type ConfigObject,
  type DelegationObject,
  type NamespacedActorGrantObject,
  type NamespacedPolicyObject,
  type PolicyObject,
} from '../model/index.js';
import { ArtefactCache } from './artefact-cache.js';
import { compareNames } from './compare-names.js';
import { indexCapabilities } from './index-capabilities.js';
import { indexGrants } from './index-grants.js';
import { indexIdentities } from './index-identities.js';
import { indexPolicies } from './index-policies.js';
import { IndexSnapshot } from './index-snapshot.js';
import { indexTenancy, resolveNamespacedGrants } from './index-tenancy.js';
import { ObjectStatuses } from './object-statuses.js';

export interface BuildIndexOptions {
  /** The snapshot being replaced: artefacts of objects whose spec is unchanged are reused. */
  previous?: IndexSnapshot;
}

/**
 * The index as it would be with `candidate` added or replacing its namesake, to learn the
 * candidate's status before it is written (API writes, the admission webhook). `current`
 * keeps serving: nothing it compiled is released, and what the trial compiled is.
 */
export function previewIndex(current: IndexSnapshot, candidate: ConfigObject): IndexSnapshot {
  // Last, so it replaces its namesake: of two objects with one objectKey the later counts.
  const objects = [...current.objects(), candidate];
  const cache = new ArtefactCache(artefactsOf.get(current));
  const trial = assemble(objects, cache);
  cache.releaseFresh();
  return trial;
}

// Kept beside, not inside, the snapshot: the cache is a build detail, not part of its API.
const artefactsOf = new WeakMap<IndexSnapshot, ArtefactCache>();

/**
 * Builds an immutable snapshot from validated objects (see validateConfigObject). When two
 * objects share a kind and name, the later one counts. Never throws for a bad object: it
 * gets a Ready=False status instead. Tenancy objects fill the snapshot's TenancySlices.
 */
export function buildIndex(objects: readonly ConfigObject[], options: BuildIndexOptions = {}): IndexSnapshot {
  const cache = new ArtefactCache(options.previous ? artefactsOf.get(options.previous) : undefined);
  const snapshot = assemble(objects, cache);
  cache.releaseUnused();
  artefactsOf.set(snapshot, cache);
  return snapshot;
}

function assemble(objects: readonly ConfigObject[], cache: ArtefactCache): IndexSnapshot {
  const unique = [...new Map(objects.map((o) => [objectKey(o), o])).values()];
  const statuses = new ObjectStatuses();
  const capabilities = indexCapabilities(ofKind<CapabilityObject>(unique, 'Capability'), cache, statuses);
  const isCapability = (name: string) => capabilities.has(name);
  const { policies, rules } = indexPolicies(
    ofKind<PolicyObject>(unique, 'Policy'),
    cache,
    statuses,
    capabilities,
  );
  const actorGrants = ofKind<ActorGrantObject>(unique, 'ActorGrant');
  const namespacedGrants = resolveNamespacedGrants(
    ofKind<NamespacedActorGrantObject>(unique, 'NamespacedActorGrant'),
    statuses,
  );
  const identities = indexIdentities([...actorGrants, ...namespacedGrants]);
  const grantsByActor = indexGrants(actorGrants, statuses, isCapability, identities.conflicts);
  const tenancy = indexTenancy(
    {
      delegations: ofKind<DelegationObject>(unique, 'Delegation'),
      policies: ofKind<NamespacedPolicyObject>(unique, 'NamespacedPolicy'),
      grants: namespacedGrants,
      identityConflicts: identities.conflicts,
    },
    cache,
    statuses,
    capabilities,
  );
  const sortedStatuses = new Map([...statuses.entries].sort(([a], [b]) => compareNames(a, b)));
  return new IndexSnapshot({
    objects: Object.freeze(unique),
    capabilities,
    rules,
    policies,
    grantsByActor,
    identities: identities.bindings,
    statuses: sortedStatuses,
    tenancy,
  });
}

/** How many artefacts the build of `snapshot` compiled rather than reused. */
export function compiledArtefactCount(snapshot: IndexSnapshot): number {
  return artefactsOf.get(snapshot)?.compiled ?? 0;
}

function ofKind<T extends ConfigObject>(objects: readonly ConfigObject[], kind: T['kind']): T[] {
  return objects.filter((o): o is T => o.kind === kind);
}
