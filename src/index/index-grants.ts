import { objectKey, qualifiedName } from '../model/index.js';
import { compareNames } from './compare-names.js';
import type { IdentityConflict, ResolvedGrantObject } from './index-identities.js';
import type { IndexedGrant } from './indexed-types.js';
import type { ObjectStatuses } from './object-statuses.js';
import { isKnownTimeZone } from './time-zone.js';

/**
 * Grants by actor id, merged over all the actor's ActorGrant objects (by object name, then
 * position). Grants naming an unknown capability or time zone are indexed anyway: the first
 * start working when the capability appears, the second deny (fail closed) until fixed.
 */
export function indexGrants(
  objects: readonly ResolvedGrantObject[],
  statuses: ObjectStatuses,
  isCapability: (name: string) => boolean,
  /** ActorGrants (by objectKey) that lost an identity conflict (indexIdentities): not used, Conflict. */
  conflicts: ReadonlyMap<string, IdentityConflict> = new Map(),
): Map<string, IndexedGrant[]> {
  const byActor = new Map<string, IndexedGrant[]>();
  const sorted = [...objects].sort((a, b) => compareNames(a.metadata.name, b.metadata.name));
  for (const object of sorted) {
    const conflict = conflicts.get(objectKey(object));
    if (conflict !== undefined) {
      statuses.set(
        object,
        'Conflict',
        `${conflict.message}; this ${object.kind} is not used until that is resolved`,
        conflict.field,
      );
      continue;
    }
    const actorId = object.spec.actor.id;
    const list = byActor.get(actorId) ?? [];
    byActor.set(actorId, list);
    for (const [grantIndex, grant] of object.spec.grants.entries()) {
      list.push({
        actorId,
        actorType: object.spec.actor.type,
        capability: grant.capability,
        constraints: grant.constraints ?? {},
        source: qualifiedName(object),
        grantIndex,
      });
    }
    setStatus(object, statuses, isCapability);
  }
  for (const [actorId, list] of byActor) if (list.length === 0) byActor.delete(actorId);
  return new Map([...byActor].sort(([a], [b]) => compareNames(a, b)));
}

function setStatus(
  object: ResolvedGrantObject,
  statuses: ObjectStatuses,
  isCapability: (name: string) => boolean,
) {
  const zones = object.spec.grants
    .map((g) => g.constraints?.timeWindow?.timezone)
    .filter((z) => z !== undefined);
  const badZones = [...new Set(zones.filter((z) => !isKnownTimeZone(z)))];
  if (badZones.length > 0) {
    const first = object.spec.grants.findIndex((g) =>
      // Stryker disable next-line StringLiteral: validated zones are never empty, so a grant without one matches no bad zone.
      badZones.includes(g.constraints?.timeWindow?.timezone ?? ''),
    );
    return statuses.set(
      object,
      'InvalidSpec',
      `unknown time zone(s) ${badZones.join(', ')}; the grants using them deny until fixed`,
      `spec.grants[${first}].constraints.timeWindow.timezone`,
    );
  }
  const unknown = [...new Set(object.spec.grants.map((g) => g.capability).filter((c) => !isCapability(c)))];
  if (unknown.length > 0)
    return statuses.set(
      object,
      'UnknownCapability',
      `grants name capabilities that are not registered: ${unknown.join(', ')}; they apply once registered`,
      `spec.grants[${object.spec.grants.findIndex((g) => !isCapability(g.capability))}].capability`,
    );
  return statuses.set(
    object,
    'Accepted',
    `${object.spec.grants.length} grant(s) for actor ${object.spec.actor.id}`,
  );
}
