import { canonicalJson } from '../audit/chain.js';
import { specFingerprint } from '../index/index.js';
import {
  objectKey,
  type ActorGrantObject,
  type ConfigObject,
  type EventType,
  type GrantSpec,
  type NamespacedActorGrantObject,
} from '../model/index.js';
import { CHANGED_BY_ANNOTATION } from './config-writer.js';

/** One audit event a configuration change calls for. */
export interface ConfigChange {
  event_type: EventType;
  /** The namespace of a namespaced object: the entry's top-level `namespace`. */
  namespace?: string;
  /** The grantee for grant events, otherwise the caller who made the change. */
  actor_id: string | null;
  capability: string | null;
  data: ConfigChangeData;
}

export interface ConfigChangeData {
  kind: ConfigObject['kind'];
  name: string;
  /** Set for the namespaced kinds. */
  namespace?: string;
  uid: string | null;
  generation: number | null;
  change: 'created' | 'updated' | 'deleted';
  changed_by: string;
  /**
   * The object after the change; null when it was deleted. Replaying these rebuilds the
   * audited state. Of the several grant events of one change only the last carries it: an
   * ActorGrant of 100 grants would otherwise be stored 100 times (400 MB of audit log for
   * 100,000 grants).
   */
  object?: ConfigObject | null;
  /** For grant events: the grant concerned. */
  grant?: GrantSpec;
}

type Change = ConfigChangeData['change'];

type GrantKind = 'ActorGrant' | 'NamespacedActorGrant';
type AnyGrantObject = ActorGrantObject | NamespacedActorGrantObject;

/**
 * A re-registered capability is registered again; grants have events per granted capability.
 * A NamespacedPolicy's are a Policy's, told apart by the entry's namespace.
 */
const POLICY_EVENTS = {
  created: 'policy.created',
  updated: 'policy.updated',
  deleted: 'policy.deleted',
} as const;
const EVENT_TYPE_OF: Record<Exclude<ConfigObject['kind'], GrantKind>, Record<Change, EventType>> = {
  Capability: {
    created: 'capability.registered',
    updated: 'capability.registered',
    deleted: 'capability.deleted',
  },
  Policy: POLICY_EVENTS,
  NamespacedPolicy: POLICY_EVENTS,
  Delegation: { created: 'delegation.created', updated: 'delegation.updated', deleted: 'delegation.deleted' },
};

/** Identity of an object's content: uid and generation where Kubernetes gives them, else its spec. */
export function fingerprintOf(object: ConfigObject): string {
  const { uid, generation } = object.metadata;
  if (uid && generation !== undefined) return `${uid}/${generation}`;
  return specFingerprint(object.spec);
}

function changedBy(object: ConfigObject, fallback: string): string {
  return object.metadata.annotations?.[CHANGED_BY_ANNOTATION] ?? fallback;
}

/**
 * The audit events between two sets of objects, in a stable order. Pure: the embedded
 * store and the Kubernetes leader both call it.
 */
export function configChanges(
  before: readonly ConfigObject[],
  after: readonly ConfigObject[],
  fallbackCaller: string,
  deletedBy: (key: string) => string | undefined = () => undefined,
): ConfigChange[] {
  const old = new Map(before.map((o) => [objectKey(o), o]));
  const next = new Map(after.map((o) => [objectKey(o), o]));
  const changes: ConfigChange[] = [];
  for (const [key, object] of [...next].sort(([a], [b]) => a.localeCompare(b))) {
    const previous = old.get(key);
    if (previous && fingerprintOf(previous) === fingerprintOf(object)) continue;
    changes.push(...changesOf(previous, object, changedBy(object, fallbackCaller)));
  }
  for (const [key, object] of [...old].sort(([a], [b]) => a.localeCompare(b))) {
    if (!next.has(key)) changes.push(...changesOf(object, undefined, deletedBy(key) ?? fallbackCaller));
  }
  return changes;
}

function changesOf(
  previous: ConfigObject | undefined,
  object: ConfigObject | undefined,
  caller: string,
): ConfigChange[] {
  const subject = (object ?? previous)!;
  const change: Change = !previous ? 'created' : object ? 'updated' : 'deleted';
  const { namespace } = subject.metadata;
  const data: ConfigChangeData = {
    kind: subject.kind,
    name: subject.metadata.name,
    ...(namespace !== undefined ? { namespace } : {}),
    uid: subject.metadata.uid ?? null,
    generation: subject.metadata.generation ?? null,
    change,
    changed_by: caller,
    object: object ?? null,
  };
  const changes =
    subject.kind === 'ActorGrant' || subject.kind === 'NamespacedActorGrant'
      ? grantChanges(previous as AnyGrantObject | undefined, object as AnyGrantObject | undefined, data)
      : [
          {
            event_type: EVENT_TYPE_OF[subject.kind][change],
            actor_id: caller,
            capability: subject.kind === 'Capability' ? subject.spec.name : null,
            data,
          },
        ];
  return namespace === undefined ? changes : changes.map((c) => ({ namespace, ...c }));
}

/** The actor a grant object grants: `N/bot` for spec.actor.id `bot` of a NamespacedActorGrant in N. */
function grantee(object: AnyGrantObject | undefined): string | undefined {
  if (!object) return undefined;
  const { id } = object.spec.actor;
  return object.kind === 'NamespacedActorGrant' ? `${object.metadata.namespace}/${id}` : id;
}

/** Grant events are per granted capability: a changed constraint is a new grant of it. */
function grantChanges(
  previous: AnyGrantObject | undefined,
  object: AnyGrantObject | undefined,
  data: ConfigChangeData,
): ConfigChange[] {
  const grantsOf = (o: AnyGrantObject | undefined) =>
    new Map((o?.spec.grants ?? []).map((g) => [g.capability, g]));
  const before = grantsOf(previous);
  const after = grantsOf(object);
  const actorIds = { before: grantee(previous), after: grantee(object) };
  const changes: ConfigChange[] = [];
  for (const [capability, grant] of after) {
    const old = before.get(capability);
    const same = old && actorIds.before === actorIds.after && canonicalJson(old) === canonicalJson(grant);
    if (!same)
      changes.push({
        event_type: 'actor.grant.created',
        actor_id: actorIds.after ?? null,
        capability,
        data: { ...data, grant },
      });
  }
  for (const [capability, grant] of before) {
    const kept = after.has(capability) && actorIds.before === actorIds.after;
    if (!kept)
      changes.push({
        event_type: 'actor.grant.revoked',
        actor_id: actorIds.before ?? null,
        capability,
        data: { ...data, grant },
      });
  }
  // The object once per change, on its last event (replay applies it after its grants).
  changes.forEach((change, i) => {
    if (i < changes.length - 1) delete change.data.object;
  });
  return changes;
}
