import type { Logger } from 'pino';
import {
  acceptedObjects,
  buildIndex,
  isRejected,
  refuseCapabilityInUse,
  writeStatus,
  type IndexSnapshot,
  type IndexStore,
} from '../index/index.js';
import type { ConfigAuditor } from '../governance/config-auditor.js';
import {
  CHANGED_BY_ANNOTATION,
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
  type ActorType,
  type CapabilityObject,
  type CapabilitySpec,
  type ConfigObject,
  type GrantSpec,
  type PolicySpec,
} from '../model/index.js';
import type { ApiObjectFile } from './api-object-file.js';
import type { FirstSeenFile } from './first-seen-file.js';
import type { ManifestSnapshot, ManifestWatcher } from './manifest-watcher.js';
import { capabilityObjectName, derivedUid, grantObjectName } from './object-names.js';

export interface EmbeddedConfigDeps {
  manifests: ManifestWatcher | undefined;
  apiObjects: ApiObjectFile;
  /** When each manifest object was first seen: its creationTimestamp. */
  firstSeen: FirstSeenFile;
  index: IndexStore;
  auditor: ConfigAuditor;
  clock: () => Date;
  logger: Logger;
}

/**
 * Embedded configuration: the manifests folder (read-only, GitOps) plus the objects
 * written through the API (a file in the data directory). Every change is audited
 * before it takes effect; if the audit log refuses, the change does not happen.
 */
export class EmbeddedConfig implements ConfigWriter {
  private manifest: ManifestSnapshot = { objects: [], problems: [], fileOf: new Map() };
  private apiObjects: ConfigObject[] = [];
  /** Serialises writes and reloads: each builds on the state the previous one left. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: EmbeddedConfigDeps) {}

  get problems(): ManifestSnapshot['problems'] {
    return this.manifest.problems;
  }

  async start(): Promise<void> {
    this.apiObjects = await this.deps.apiObjects.read();
    await this.deps.firstSeen.load();
    if (this.deps.manifests) this.manifest = await this.deps.manifests.load();
    await this.apply('manifests');
    this.deps.manifests?.watch((snapshot) =>
      this.serialised(async () => {
        const previous = this.manifest;
        this.manifest = snapshot;
        try {
          await this.apply('manifests');
        } catch (err) {
          this.manifest = previous;
          throw err;
        }
      }),
    );
  }

  async close(): Promise<void> {
    await this.deps.manifests?.close();
    await this.queue.catch(() => undefined);
  }

  registerCapability(spec: CapabilitySpec, caller: string): Promise<Written<CapabilityObject>> {
    return this.serialised(async () => {
      const taken = this.deps.index.current().capability(spec.name);
      if (taken)
        throw new ArbiterError(
          'CONFLICT',
          `capability ${spec.name} is already registered (object ${taken.id})`,
        );
      const object: CapabilityObject = {
        apiVersion: API_VERSION,
        kind: 'Capability',
        metadata: this.metadata('Capability', capabilityObjectName(spec.name), caller),
        spec,
      };
      return this.write(object, true);
    });
  }

  createPolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>> {
    return this.serialised(async () => {
      const kind = policyKind(namespace);
      if (this.find(kind, name, namespace))
        throw new ArbiterError('CONFLICT', `policy ${namedIn(name, namespace)} already exists`);
      const object = {
        apiVersion: API_VERSION,
        kind,
        metadata: this.metadata(kind, name, caller, namespace),
        spec,
      } as AnyPolicyObject;
      return this.write(object, true);
    });
  }

  updatePolicy(
    name: string,
    spec: PolicySpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyPolicyObject>> {
    return this.serialised(async () => {
      const kind = policyKind(namespace);
      this.refuseManifestOwned(kind, name, namespace);
      const existing = this.find(kind, name, namespace) as AnyPolicyObject | undefined;
      if (!existing) throw new ArbiterError('NOT_FOUND', `no policy ${namedIn(name, namespace)}`);
      const object = { ...existing, metadata: this.nextMetadata(existing, caller), spec } as AnyPolicyObject;
      return this.write(object, false);
    });
  }

  grant(
    actor: { id: string; type?: ActorType },
    grant: GrantSpec,
    caller: string,
    namespace?: string,
  ): Promise<Written<AnyActorGrantObject>> {
    return this.serialised(async () => {
      const kind = grantKind(namespace);
      const name = grantObjectName(actor.id, grant.capability);
      this.refuseManifestOwned(kind, name, namespace);
      const existing = this.find(kind, name, namespace) as AnyActorGrantObject | undefined;
      const spec = { actor: { id: actor.id, ...(actor.type ? { type: actor.type } : {}) }, grants: [grant] };
      const object = (
        existing
          ? { ...existing, metadata: this.nextMetadata(existing, caller), spec }
          : {
              apiVersion: API_VERSION,
              kind,
              metadata: this.metadata(kind, name, caller, namespace),
              spec,
            }
      ) as AnyActorGrantObject;
      return this.write(object, !existing);
    });
  }

  revoke(actorId: string, capability: string, caller: string, namespace?: string): Promise<number> {
    return this.serialised(async () => {
      const kind = grantKind(namespace);
      const grants = (o: ConfigObject): o is AnyActorGrantObject =>
        o.kind === kind &&
        o.metadata.namespace === namespace &&
        o.spec.actor.id === actorId &&
        o.spec.grants.some((g) => g.capability === capability);
      const inManifests = this.manifest.objects.filter(grants);
      if (inManifests.length > 0) {
        const files = inManifests.map((o) => this.manifest.fileOf.get(objectKey(o))).join(', ');
        throw new ArbiterError(
          'CONFLICT',
          `the grant of ${capability} to ${namedIn(actorId, namespace)} is declared in manifest ${files}; remove it there`,
        );
      }
      const affected = this.apiObjects.filter(grants);
      if (affected.length === 0)
        throw new ArbiterError(
          'NOT_FOUND',
          `actor ${namedIn(actorId, namespace)} has no grant of ${capability}`,
        );
      const next = this.apiObjects.flatMap((o): ConfigObject[] => {
        if (!grants(o)) return [o];
        const remaining = o.spec.grants.filter((g) => g.capability !== capability);
        return remaining.length === 0
          ? []
          : [
              {
                ...o,
                metadata: this.nextMetadata(o, caller),
                spec: { ...o.spec, grants: remaining },
              } as ConfigObject,
            ];
      });
      await this.commit(next, caller);
      return affected.length;
    });
  }

  deletePolicy(name: string, caller: string, namespace?: string): Promise<void> {
    return this.serialised(async () => {
      const kind = policyKind(namespace);
      this.refuseManifestOwned(kind, name, namespace);
      if (!this.find(kind, name, namespace))
        throw new ArbiterError('NOT_FOUND', `no policy ${namedIn(name, namespace)}`);
      await this.commit(this.without(kindKey(kind, name, namespace)), caller);
    });
  }

  deleteCapability(name: string, caller: string): Promise<string[]> {
    return this.serialised(async () => {
      const combined = this.combined();
      const claimants = combined.filter((o) => o.kind === 'Capability' && o.spec.name === name);
      if (claimants.length === 0) throw new ArbiterError('NOT_FOUND', `no capability ${name}`);
      for (const object of claimants) this.refuseManifestOwned('Capability', object.metadata.name);
      refuseCapabilityInUse(combined, name);
      await this.commit(this.without(...claimants.map(objectKey)), caller);
      return claimants.map((o) => o.metadata.name);
    });
  }

  /** The API objects but those of these objectKeys. */
  private without(...keys: string[]): ConfigObject[] {
    const gone = new Set(keys);
    return this.apiObjects.filter((o) => !gone.has(objectKey(o)));
  }

  private async write<T extends ConfigObject>(object: T, created: boolean): Promise<Written<T>> {
    const next = [...this.without(objectKey(object)), object];
    const snapshot = await this.commit(
      next,
      object.metadata.annotations?.[CHANGED_BY_ANNOTATION] ?? 'api',
      object,
    );
    return { object, status: snapshot.statusOf(object), created };
  }

  /** Validates against a trial index, persists, audits, then publishes; undoes the file on audit failure. */
  private async commit(
    nextApiObjects: ConfigObject[],
    caller: string,
    written?: ConfigObject,
  ): Promise<IndexSnapshot> {
    const current = this.deps.index.current();
    const trial = buildIndex(this.combinedWith(nextApiObjects), { previous: current });
    if (written) {
      const status = writeStatus(current, trial, written);
      if (status && isRejected(status)) {
        throw new ArbiterError('INVALID_REQUEST', status.message, { reason: status.reason });
      }
    }
    const previous = this.apiObjects;
    await this.deps.apiObjects.write(nextApiObjects);
    try {
      await this.deps.auditor.record(acceptedObjects(trial), caller);
    } catch (err) {
      await this.deps.apiObjects.write(previous);
      throw err;
    }
    this.apiObjects = nextApiObjects;
    return this.deps.index.replace(trial.objects());
  }

  /** Publishes the manifests with the API objects (first noting when new manifest objects appeared). */
  private async apply(caller: string): Promise<void> {
    await this.deps.firstSeen.note(this.manifest.objects.map(objectKey), this.deps.clock());
    const objects = this.combined();
    const next = buildIndex(objects, { previous: this.deps.index.current() });
    const recorded = await this.deps.auditor.record(acceptedObjects(next), caller);
    this.deps.index.replace(next.objects());
    this.deps.logger.info(
      { objects: objects.length, audited_changes: recorded, problems: this.manifest.problems.length },
      'configuration loaded',
    );
  }

  private combined(): ConfigObject[] {
    return this.combinedWith(this.apiObjects);
  }

  /** Manifests win over API objects of the same kind/name: the folder is the GitOps source of truth. */
  private combinedWith(apiObjects: readonly ConfigObject[]): ConfigObject[] {
    const fromManifests = this.manifest.objects.map((o) => this.withIdentity(o));
    const taken = new Set(fromManifests.map(objectKey));
    return [...fromManifests, ...apiObjects.filter((o) => !taken.has(objectKey(o)))];
  }

  /**
   * Manifest objects carry no uid and no creationTimestamp: a stable uid derived from the
   * name (audit entries name it), and the time it was first seen.
   */
  private withIdentity(object: ConfigObject): ConfigObject {
    const { uid, creationTimestamp } = object.metadata;
    if (uid && creationTimestamp) return object;
    const key = objectKey(object);
    const firstSeen = this.deps.firstSeen.timeOf(key);
    return {
      ...object,
      metadata: {
        ...object.metadata,
        uid: uid ?? derivedUid(key),
        ...((creationTimestamp ?? firstSeen) ? { creationTimestamp: creationTimestamp ?? firstSeen } : {}),
      },
    } as ConfigObject;
  }

  private find(kind: ConfigObject['kind'], name: string, namespace?: string): ConfigObject | undefined {
    const key = kindKey(kind, name, namespace);
    return this.combined().find((o) => objectKey(o) === key);
  }

  private refuseManifestOwned(kind: ConfigObject['kind'], name: string, namespace?: string): void {
    const file = this.manifest.fileOf.get(kindKey(kind, name, namespace));
    if (file)
      throw new ArbiterError(
        'CONFLICT',
        `${kind} ${namedIn(name, namespace)} is declared in manifest ${file}; change it there`,
      );
  }

  private metadata(
    kind: ConfigObject['kind'],
    name: string,
    caller: string,
    namespace?: string,
  ): ConfigObject['metadata'] {
    return {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      uid: derivedUid(`${kindKey(kind, name, namespace)}@${this.deps.clock().toISOString()}`),
      generation: 1,
      creationTimestamp: this.deps.clock().toISOString(),
      annotations: { [CHANGED_BY_ANNOTATION]: caller },
    };
  }

  private nextMetadata(existing: ConfigObject, caller: string): ConfigObject['metadata'] {
    return {
      ...existing.metadata,
      generation: (existing.metadata.generation ?? 1) + 1,
      annotations: { ...existing.metadata.annotations, [CHANGED_BY_ANNOTATION]: caller },
    };
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
