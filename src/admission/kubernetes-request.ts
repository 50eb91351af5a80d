import { createHash } from 'node:crypto';
import { canonicalJson } from '../audit/chain.js';
import type { KubernetesRequestData } from '../governance/decision-record.js';
import type { IdentityBinding } from '../index/index.js';
import type { Proposal } from '../model/index.js';
import type { AdmissionRequest } from './admission-review.js';

/** The proposal's actor type when the binding ActorGrant names none (adds no risk). */
export const DEFAULT_KUBERNETES_ACTOR_TYPE = 'automation';

/**
 * `k8s.<resource>[.<subresource>].<operation>`, as the API names them: plural, lower case
 * (`k8s.configmaps.create`, `k8s.deployments.scale.update`, `k8s.pods.exec.connect`).
 */
export function capabilityOf(request: AdmissionRequest): string {
  const parts = ['k8s', request.resource.resource];
  if (request.subResource) parts.push(request.subResource);
  // Stryker disable next-line MethodExpression: the joined name is lower-cased as a whole below
  parts.push(request.operation.toLowerCase());
  return parts.join('.').toLowerCase();
}

/**
 * The proposal's parameters: what policies may test, e.g. `parameters.namespace == 'prod'`
 * or `parameters.object.spec.replicas > 10`. Objects lose metadata.managedFields (large
 * and about who wrote which field, not about what is asked).
 */
export function parametersOf(request: AdmissionRequest): Record<string, unknown> {
  return {
    operation: request.operation.toLowerCase(),
    group: request.resource.group,
    version: request.resource.version,
    resource: request.resource.resource,
    subresource: request.subResource ?? '',
    kind: request.kind.kind,
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    object: withoutManagedFields(request.object),
    old_object: withoutManagedFields(request.oldObject),
    dry_run: request.dryRun === true,
    username: request.userInfo.username ?? '',
  };
}

/** The proposal of the bound actor for a Kubernetes API request. */
export function proposalOf(request: AdmissionRequest, binding: IdentityBinding): Proposal {
  return {
    actor: { id: binding.actorId, type: binding.actorType ?? DEFAULT_KUBERNETES_ACTOR_TYPE },
    action: { capability: capabilityOf(request), parameters: parametersOf(request) },
  };
}

/** What the audit trail shows of the request, with the fingerprint of an approved retry. */
export function requestDataOf(request: AdmissionRequest): KubernetesRequestData {
  return {
    uid: request.uid,
    username: request.userInfo.username ?? '',
    operation: request.operation.toLowerCase(),
    group: request.resource.group,
    version: request.resource.version,
    resource: request.resource.resource,
    subresource: request.subResource ?? '',
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    fingerprint: requestFingerprint(request),
  };
}

/** Fields that differ between two tries of the same request, never what is asked. */
const VOLATILE_METADATA = [
  'resourceVersion',
  'uid',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
] as const;

/**
 * "The same request": the same identity asking the same operation on the same object
 * with the same content. Volatile fields (resourceVersion, uid, generation,
 * creationTimestamp, managedFields, status) and the old object are left out: a retry after
 * an approval sees a newer resourceVersion, yet asks for the same thing.
 */
export function requestFingerprint(request: AdmissionRequest): string {
  const identity = {
    username: request.userInfo.username ?? '',
    operation: request.operation,
    group: request.resource.group,
    resource: request.resource.resource,
    subresource: request.subResource ?? '',
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    object: stable(request.object),
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}

function stable(object: Record<string, unknown> | null | undefined): unknown {
  if (!object) return null;
  const { status: _status, metadata, ...rest } = object;
  if (metadata === null || typeof metadata !== 'object') return rest;
  const kept: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
  for (const field of VOLATILE_METADATA) delete kept[field];
  return { ...rest, metadata: kept };
}

function withoutManagedFields(object: Record<string, unknown> | null | undefined): unknown {
  if (!object) return null;
  const metadata = object.metadata;
  if (metadata === null || typeof metadata !== 'object' || !('managedFields' in metadata)) return object;
  const { managedFields: _managedFields, ...kept } = metadata as Record<string, unknown>;
  return { ...object, metadata: kept };
}
