import { ArbiterError, type ConfigObject } from '../model/index.js';
import { compareNames } from './compare-names.js';

/** What still names a capability: grants (by actor and ActorGrant object) and policy rules. */
export interface CapabilityUsers {
  grants: { actor_id: string; object: string }[];
  rules: { policy: string; rule_index: number }[];
}

/**
 * Every grant and policy rule among `objects` that names `capability`, enabled or not:
 * deleting the capability would leave them pointing at nothing (UnknownCapability).
 */
export function capabilityUsers(objects: readonly ConfigObject[], capability: string): CapabilityUsers {
  const users: CapabilityUsers = { grants: [], rules: [] };
  for (const object of objects) {
    if (object.kind === 'ActorGrant' && object.spec.grants.some((g) => g.capability === capability))
      users.grants.push({ actor_id: object.spec.actor.id, object: object.metadata.name });
    if (object.kind === 'Policy')
      object.spec.rules.forEach((rule, i) => {
        if (rule.capability === capability) users.rules.push({ policy: object.metadata.name, rule_index: i });
      });
  }
  users.grants.sort((a, b) => compareNames(a.actor_id, b.actor_id) || compareNames(a.object, b.object));
  users.rules.sort((a, b) => compareNames(a.policy, b.policy) || a.rule_index - b.rule_index);
  return users;
}

/** Shown in full up to this many of each; the error's details always hold all of them. */
const NAMED = 10;

function listed(items: string[]): string {
  const more = items.length - NAMED;
  return items.slice(0, NAMED).join(', ') + (more > 0 ? ` and ${more} more` : '');
}

/** A 409 naming what still needs the capability, when anything does. */
export function refuseCapabilityInUse(objects: readonly ConfigObject[], capability: string): void {
  const users = capabilityUsers(objects, capability);
  const hasGrants = users.grants.length > 0;
  const hasRules = users.rules.length > 0;
  if (!hasGrants && !hasRules) return;
  const parts = [
    ...(hasGrants
      ? [`granted to ${listed(users.grants.map((g) => `${g.actor_id} (ActorGrant ${g.object})`))}`]
      : []),
    ...(hasRules
      ? [`named by policy rules ${listed(users.rules.map((r) => `${r.policy} rule ${r.rule_index}`))}`]
      : []),
  ];
  const steps = [...(hasGrants ? ['revoke those grants'] : []), ...(hasRules ? ['remove those rules'] : [])];
  throw new ArbiterError(
    'CONFLICT',
    `capability ${capability} is still ${parts.join('; ')}: ${steps.join(' and ')} first`,
    { ...users },
  );
}
