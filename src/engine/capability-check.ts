import type { IndexedCapability } from '../index/index.js';
import type { Proposal } from '../model/index.js';

export type CapabilityResult =
  | { ok: true; capability: IndexedCapability }
  | { ok: false; code: 'not_registered' | 'invalid_parameters'; reason: string };

/** semantics.md step 2. */
export function checkCapability(
  capability: IndexedCapability | undefined,
  proposal: Proposal,
): CapabilityResult {
  const name = proposal.action.capability;
  if (!capability)
    return { ok: false, code: 'not_registered', reason: `Capability ${name} is not registered.` };
  const problem = capability.validateParameters(proposal.action.parameters);
  if (problem !== undefined)
    return {
      ok: false,
      code: 'invalid_parameters',
      reason: `The parameters do not match the parameter schema of ${name}: ${problem}.`,
    };
  return { ok: true, capability };
}
