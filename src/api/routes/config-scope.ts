import type { Request } from 'express';
import { compareNames } from '../../index/compare-names.js';
import type { IndexedGrant, IndexedPolicy, IndexSnapshot } from '../../index/index.js';
import {
  ArbiterError,
  isNamespaceName,
  namespacedActorId,
  type NamespacedPolicyObject,
} from '../../model/index.js';
import type { RbacRequest } from '../authenticate.js';

/**
 * Where the policy and grant routes write (issue #38): the cluster (`/policies`, Policy and
 * ActorGrant) or the namespace of the path (`/namespaces/{ns}/policies`, NamespacedPolicy
 * and NamespacedActorGrant). One set of handlers serves both; this is what differs.
 */
export interface ConfigScope {
  /** The routes' path prefix. */
  readonly prefix: string;
  /** The request's namespace, undefined for the cluster; INVALID_REQUEST for a bad name. */
  namespaceOf(req: Request): string | undefined;
  /** What the guard asks beyond the scope, for a route about `resource` with this RBAC verb. */
  access(resource: 'policies' | 'actorgrants', verb: string): RbacRequest | undefined;
  policies(snapshot: IndexSnapshot, namespace: string | undefined): readonly IndexedPolicy[];
  /** The full actor id of `id` in the path, validated. */
  actorId(id: string, namespace: string | undefined): string;
  grantsOfActor(snapshot: IndexSnapshot, actorId: string): readonly IndexedGrant[];
}

export const CLUSTER_SCOPE: ConfigScope = {
  prefix: '',
  namespaceOf: () => undefined,
  access: () => undefined,
  policies: (snapshot) => snapshot.policies(),
  actorId(id) {
    if (id.length > 256) throw new ArbiterError('INVALID_REQUEST', 'actor id is longer than 256 characters');
    return id;
  },
  grantsOfActor: (snapshot, actorId) => snapshot.grantsOfActor(actorId),
};

function pathNamespace(req: Request): string {
  const namespace = String(req.params.namespace);
  if (!isNamespaceName(namespace))
    throw new ArbiterError(
      'INVALID_REQUEST',
      `namespace ${JSON.stringify(namespace)} is not a namespace name (lowercase letters, digits and "-", at most 63)`,
    );
  return namespace;
}

export const NAMESPACE_SCOPE: ConfigScope = {
  prefix: '/namespaces/:namespace',
  namespaceOf: pathNamespace,
  // A key must be limited to no namespace or to this one; a Kubernetes user needs the verb
  // on the namespaced kind in this namespace (what kubectl would need).
  access: (resource, verb) => ({
    perNamespace: true,
    namespace: (req) => Promise.resolve(pathNamespace(req)),
    resource: `namespaced${resource}`,
    verb,
  }),
  policies: (snapshot, namespace) =>
    snapshot
      .objects()
      .filter(
        (o): o is NamespacedPolicyObject =>
          o.kind === 'NamespacedPolicy' && o.metadata.namespace === namespace,
      )
      .flatMap((o) => {
        const status = snapshot.statusOf(o);
        if (!status) return [];
        const { name, creationTimestamp } = o.metadata;
        return [
          { name, spec: o.spec, enabled: o.spec.enabled ?? true, createdAt: creationTimestamp, status },
        ];
      })
      .sort((a, b) => compareNames(a.name, b.name)),
  actorId: (id, namespace) => namespacedActorId(namespace ?? '', id),
  grantsOfActor: (snapshot, actorId) => snapshot.namespacedGrantsOfActor(actorId),
};
