import {
  isRejected,
  previewIndex,
  refuseCapabilityInUse,
  validateConfigObject,
  writeStatus,
  type IndexSnapshot,
} from '../index/index.js';
import {
  CHANGED_BY_ANNOTATION,
  DELETED_AT_ANNOTATION,
  DELETED_BY_ANNOTATION,
  grantKind,
  namedIn,
  policyKind,
  type AnyActorGrantObject,
  type AnyPolicyObject,
  type ConfigWriter,
  type Written,
} from '../governance/config-writer.js';
import {
  API_VERSION,
  ArbiterError,
  kindKey,
  objectKey,
  type ActorGrantSpec,
  type ActorType,
  type CapabilityObject,
  type CapabilitySpec,
  type ConfigObject,
  type GrantSpec,
  type Kind,
  type PolicySpec,
} from '../model/index.js';
import { capabilityObjectName, grantObjectName } from '../sources/object-names.js';
import type { CustomObjects } from './custom-objects.js';
import type { RawObject } from './resources.js';
import type { VersionWaiters } from './version-waiters.js';

export interface KubernetesWritesDeps {
  objects: CustomObjects;
  waiters: VersionWaiters;
  /** The published index; undefined until every kind has synced. */
  snapshot: () => IndexSnapshot | undefined;
  /** The ActorGrant (or NamespacedActorGrant) objects as the informer holds them. */
  actorGrants: (kind: AnyActorGrantObject['kind']) => readonly RawObject[];
  clock: () => Date;
}

/** Optimistic-concurrency retries of a read-modify-write that lost a race. */
const MAX_ATTEMPTS = 3;

/**
 * The API's configuration writes as custom resources: created or replaced with the
 * caller in the changed-by annotation, answered once this replica's index holds the
 * written version (read-your-writes). A write that the index would reject (e.g. a
 * condition that does not compile) is refused before it reaches Kubernetes.
 */
export class KubernetesWrites implements ConfigWriter {
  constructor(private readonly deps: KubernetesWritesDeps) {}

  async registerCapability(spec: CapabilitySpec, caller: string): Promise<Written<CapabilityObject>> {
    const taken = this.snapshot().capability(spec.name);
    if (taken)
      throw new ArbiterError(
        'CONFLICT',
        `capability ${spec.name} is already registered (object ${taken.id})`,
      );
    const object = newObject('Capability', capabilityObjectName(spec.name), spec, caller) as CapabilityObject;
    this.refuseRejected(object);
    const created = await this.create('Capability', object, `capability ${spec.name} is already registered`);
    return this.settled<CapabilityObject>('Capability', created, true);
  }

  async createPolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>> {
    const kind = policyKind(namespace);
    const object = newObject(kind, name, spec, caller, namespace) as AnyPolicyObject;
    this.refuseRejected(object);
    const created = await this.create(kind, object, `policy ${namedIn(name, namespace)} already exists`);
    return this.settled<AnyPolicyObject>(kind, created, true);
  }

  async updatePolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>> {
    const kind = policyKind(namespace);
    const target = { kind, name, namespace };
    const updated = await this.readModifyWrite(target, (current) => {
      if (!current) throw new ArbiterError('NOT_FOUND', `no policy ${namedIn(name, namespace)}`);
      return { ...current, metadata: withCaller(current.metadata, caller), spec };
    });
    return this.settled<AnyPolicyObject>(kind, updated!, false);
  }

  async grant(
    actor: { id: string; type?: ActorType },
    grant: GrantSpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyActorGrantObject>> {
    const kind = grantKind(namespace);
    const name = grantObjectName(actor.id, grant.capability);
    const spec: ActorGrantSpec = {
      actor: { id: actor.id, ...(actor.type ? { type: actor.type } : {}) },
      grants: [grant],
    };
    let created = false;
    const written = await this.readModifyWrite({ kind, name, namespace }, (current) => {
      created = current === undefined;
      return current
        ? { ...current, metadata: withCaller(current.metadata, caller), spec }
        : (newObject(kind, name, spec, caller, namespace) as RawObject);
    });
    return this.settled<AnyActorGrantObject>(kind, written!, created);
  }

  async revoke(actorId: string, capability: string, caller: string, namespace?: string): Promise<number> {
    this.snapshot();
    const kind = grantKind(namespace);
    const holds = (raw: RawObject) => {
      const spec = raw.spec as Partial<ActorGrantSpec> | undefined;
      return spec?.actor?.id === actorId && (spec.grants ?? []).some((g) => g.capability === capability);
    };
    const affected = this.deps
      .actorGrants(kind)
      .filter((raw) => raw.metadata?.namespace === namespace && holds(raw));
    if (affected.length === 0)
      throw new ArbiterError(
        'NOT_FOUND',
        `actor ${namedIn(actorId, namespace)} has no grant of ${capability}`,
      );
    const settled: Promise<void>[] = [];
    for (const raw of affected) {
      const name = raw.metadata?.name ?? '';
      const written = await this.readModifyWrite(
        { kind, name, namespace },
        (current) => {
          if (!current || !holds(current)) return undefined;
          const spec = current.spec as ActorGrantSpec;
          const grants = spec.grants.filter((g) => g.capability !== capability);
          if (grants.length === 0) return 'delete';
          return { ...current, metadata: withCaller(current.metadata, caller), spec: { ...spec, grants } };
        },
        caller,
      );
      const key = kindKey(kind, name, namespace);
      settled.push(
        written
          ? this.deps.waiters.untilVersion(key, written.metadata?.resourceVersion ?? '')
          : this.deps.waiters.untilGone(key),
      );
    }
    await Promise.all(settled);
    return affected.length;
  }

  async deletePolicy(name: string, caller: string, namespace?: string): Promise<void> {
    this.snapshot();
    const kind = policyKind(namespace);
    await this.deleteObjects(kind, [name], `no policy ${namedIn(name, namespace)}`, caller, namespace);
  }

  async deleteCapability(name: string, caller: string): Promise<string[]> {
    const objects = this.snapshot().objects();
    const claimants = objects
      .filter((o) => o.kind === 'Capability' && o.spec.name === name)
      .map((o) => o.metadata.name);
    if (claimants.length === 0) throw new ArbiterError('NOT_FOUND', `no capability ${name}`);
    refuseCapabilityInUse(objects, name);
    await this.deleteObjects('Capability', claimants, `no capability ${name}`, caller);
    return claimants;
  }

  /** Deletes the objects as the caller (see deleteAs), answering once the index no longer has them. */
  private async deleteObjects(
    kind: Kind,
    names: string[],
    notFound: string,
    caller: string,
    namespace?: string,
  ): Promise<void> {
    for (const name of names) {
      await this.readModifyWrite(
        { kind, name, namespace },
        (current) => {
          if (!current) throw new ArbiterError('NOT_FOUND', notFound);
          return 'delete';
        },
        caller,
      );
    }
    await Promise.all(names.map((name) => this.deps.waiters.untilGone(kindKey(kind, name, namespace))));
  }

  private snapshot(): IndexSnapshot {
    const snapshot = this.deps.snapshot();
    if (!snapshot)
      throw new ArbiterError('UNAVAILABLE', 'the configuration has not been read from Kubernetes yet');
    return snapshot;
  }

  /** Refuses what the index would mark unusable, with its reason (as embedded mode does). */
  private refuseRejected(candidate: ConfigObject): void {
    const current = this.snapshot();
    const status = writeStatus(current, previewIndex(current, candidate), candidate);
    if (status && isRejected(status))
      throw new ArbiterError('INVALID_REQUEST', status.message, { reason: status.reason });
  }

  private async create(kind: Kind, object: ConfigObject, conflictMessage: string): Promise<RawObject> {
    try {
      return await this.deps.objects.create(kind, object as RawObject);
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'CONFLICT')
        throw new ArbiterError('CONFLICT', conflictMessage, undefined, { cause: err });
      throw err;
    }
  }

  /**
   * GET, change, PUT with the read resourceVersion; retried when another writer got in
   * between. `change` returns the new object, 'delete', or undefined for nothing to do.
   */
  private async readModifyWrite(
    target: ObjectTarget,
    change: (current: RawObject | undefined) => RawObject | 'delete' | undefined,
    caller = '',
  ): Promise<RawObject | undefined> {
    const { kind, name, namespace } = target;
    for (let attempt = 1; ; attempt++) {
      const current = await this.deps.objects.get(kind, name, namespace).catch((err: unknown) => {
        if (err instanceof ArbiterError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      });
      const next = change(current);
      try {
        if (next === undefined) return current;
        if (next === 'delete') {
          await this.deleteAs(target, current, caller);
          return undefined;
        }
        const checked = validateConfigObject(next);
        if (checked.ok) this.refuseRejected(checked.object);
        return current
          ? await this.deps.objects.replace(kind, next)
          : await this.deps.objects.create(kind, next);
      } catch (err) {
        const raced = err instanceof ArbiterError && err.code === 'CONFLICT';
        if (!raced || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Records the caller on the object, then deletes exactly that version: the watch's
   * delete event carries the annotations to the leader, which audits the deletion.
   */
  private async deleteAs(
    target: ObjectTarget,
    current: RawObject | undefined,
    caller: string,
  ): Promise<void> {
    const { kind, name, namespace } = target;
    if (!current) return this.deps.objects.delete(kind, name, undefined, namespace);
    const annotations = {
      ...current.metadata?.annotations,
      [DELETED_BY_ANNOTATION]: caller,
      [DELETED_AT_ANNOTATION]: this.deps.clock().toISOString(),
    };
    const marked = await this.deps.objects.replace(kind, {
      ...current,
      metadata: { ...current.metadata, annotations },
    });
    await this.deps.objects.delete(kind, name, marked.metadata?.resourceVersion, namespace);
  }

  /** Waits until the index holds the written version, then answers from it. */
  private async settled<T extends ConfigObject>(
    kind: Kind,
    raw: RawObject,
    created: boolean,
  ): Promise<Written<T>> {
    const name = raw.metadata?.name ?? '';
    const namespace = raw.metadata?.namespace;
    const key = kindKey(kind, name, namespace);
    await this.deps.waiters.untilVersion(key, raw.metadata?.resourceVersion ?? '');
    const snapshot = this.snapshot();
    const inIndex = snapshot.objects().find((o) => objectKey(o) === key);
    const checked = validateConfigObject({ ...raw, kind, apiVersion: API_VERSION });
    const object = (inIndex ?? (checked.ok ? checked.object : undefined)) as T | undefined;
    if (!object) throw new ArbiterError('INTERNAL', `${key} was written but is not a valid object`);
    return { object, status: snapshot.status(kind, name, namespace), created };
  }
}

/** Which object a read-modify-write is about (`namespace` for the namespaced kinds). */
interface ObjectTarget {
  kind: Kind;
  name: string;
  namespace: string | undefined;
}

function newObject(
  kind: Kind,
  name: string,
  spec: unknown,
  caller: string,
  namespace?: string,
): ConfigObject {
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      annotations: { [CHANGED_BY_ANNOTATION]: caller },
    },
    spec,
  } as ConfigObject;
}

function withCaller(metadata: RawObject['metadata'], caller: string): RawObject['metadata'] {
  return { ...metadata, annotations: { ...metadata?.annotations, [CHANGED_BY_ANNOTATION]: caller } };
}
