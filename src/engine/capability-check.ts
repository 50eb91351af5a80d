import type { IndexedCapability } from '../index/index.js';
import type { McpToolPin, Observations, Proposal } from '../model/index.js';

export type CapabilityResult =
  | { ok: true; capability: IndexedCapability }
  | { ok: false; code: 'not_registered' | 'definition_changed' | 'invalid_parameters'; reason: string };

/**
 * semantics.md step 2, and for a capability pinned to an MCP tool's definition, the
 * definition its upstream lists now, when the caller observed it.
 */
export function checkCapability(
  capability: IndexedCapability | undefined,
  proposal: Proposal,
  observed: Observations = {},
): CapabilityResult {
  const name = proposal.action.capability;
  if (!capability)
    return { ok: false, code: 'not_registered', reason: `Capability ${name} is not registered.` };
  const pin = capability.spec.mcp;
  const digest = observed.toolDefinitionDigest;
  if (pin && digest !== undefined && definitionChanged(pin, digest))
    return { ok: false, code: 'definition_changed', reason: definitionChangedReason(name, pin, digest) };
  const problem = capability.validateParameters(proposal.action.parameters);
  if (problem !== undefined)
    return {
      ok: false,
      code: 'invalid_parameters',
      reason: `The parameters do not match the parameter schema of ${name}: ${problem}.`,
    };
  return { ok: true, capability };
}

/** Whether the definition observed (null: no longer listed) is not the one pinned. */
export function definitionChanged(pin: McpToolPin, observed: string | null): boolean {
  return observed !== pin.definitionDigest;
}

function definitionChangedReason(name: string, pin: McpToolPin, observed: string | null): string {
  const now = observed ?? 'none (the upstream no longer lists it)';
  return (
    `The definition of MCP tool ${pin.tool} of server ${pin.server} changed since ${name} was pinned: ` +
    `pinned ${pin.definitionDigest}, now ${now}; review it and pin it again.`
  );
}
