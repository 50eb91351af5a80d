import {
  isRejected,
  previewIndex,
  validateConfigObject,
  writeStatus,
  type IndexSnapshot,
} from '../index/index.js';
import type { ConfigObject } from '../model/index.js';
import { allow, refuse, type AdmissionRequest, type AdmissionResponse } from './admission-review.js';

/**
 * The configuration webhook: CREATE and UPDATE of every configuration kind pass the same
 * checks as the index (one code path): the schema, then the object's status in the index
 * as it would be with the object in it. What the status would reject (a condition that
 * does not compile, a duplicate capability name, an identity bound to another actor, a
 * NamespacedActorGrant binding a foreign subject, a Delegation claiming a namespace an
 * older one holds ...) is refused with the message status would show; what is legal but
 * suspicious (a capability not registered yet, a namespaced rule or grant its namespace's
 * Delegation does not cover) is allowed with warnings kubectl prints.
 */
export function reviewConfiguration(
  request: AdmissionRequest,
  snapshot: IndexSnapshot,
  /** Arbiter's own username: its writes (status, API writes, deletion marks) always pass. */
  ownUsername: string | undefined,
): AdmissionResponse {
  if (ownUsername !== undefined && request.userInfo.username === ownUsername) return allow(request.uid);
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow(request.uid);
  const checked = validateConfigObject(request.object);
  if (!checked.ok) return refuse(request.uid, 422, checked.errors.join('; '));
  const candidate = checked.object;
  const status = writeStatus(snapshot, previewIndex(snapshot, candidate), candidate);
  if (status === undefined) return allow(request.uid);
  if (isRejected(status)) return refuse(request.uid, 422, `${status.reason}: ${status.message}`);
  const warnings = [
    ...(status.ready ? [] : [status.message]),
    ...(status.outsideDelegation === undefined ? [] : [status.outsideDelegation]),
  ].map((warning) => `${displayName(candidate)}: ${warning}`);
  return allow(request.uid, warnings);
}

/** `Policy p`, `NamespacedPolicy team-a/p`: as kubectl users name the object. */
function displayName(object: ConfigObject): string {
  const { namespace, name } = object.metadata;
  return `${object.kind} ${namespace === undefined ? '' : `${namespace}/`}${name}`;
}
