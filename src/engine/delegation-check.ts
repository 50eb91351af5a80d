import { coversCapability, type IndexedDelegation } from '../index/index.js';
import { riskLevelAtMost, type CapabilitySpec } from '../model/index.js';

export { coversCapability };

export type DelegationResult =
  { ok: true } | { ok: false; code: 'no_delegation' | 'outside_delegation'; reason: string };

/**
 * The gate of a namespace's own grants (issue #38, step 1): a NamespacedActorGrant
 * authorizes a capability only when a Delegation covers the namespace, lists the
 * capability, and allows its risk level.
 */
export function checkDelegation(
  delegation: IndexedDelegation | undefined,
  namespace: string,
  capability: Pick<CapabilitySpec, 'name' | 'riskLevel'>,
): DelegationResult {
  if (!delegation)
    return {
      ok: false,
      code: 'no_delegation',
      reason: `No Delegation covers namespace ${namespace}, so its NamespacedActorGrants authorize nothing (${capability.name}).`,
    };
  const { capabilities, maxRiskLevel } = delegation.spec;
  const refuse = (why: string): DelegationResult => ({
    ok: false,
    code: 'outside_delegation',
    reason: `Namespace ${namespace} may not grant ${capability.name}: ${why}.`,
  });
  if (!coversCapability(capabilities, capability.name))
    return refuse(`Delegation ${delegation.name} covers only ${capabilities.join(', ') || 'nothing'}`);
  if (!riskLevelAtMost(capability.riskLevel, maxRiskLevel))
    return refuse(
      `its risk level ${capability.riskLevel} is above ${maxRiskLevel}, the most Delegation ${delegation.name} allows`,
    );
  return { ok: true };
}
