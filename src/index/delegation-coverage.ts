import { riskLevelAtMost, type RiskLevel } from '../model/index.js';
import type { IndexedDelegation } from './indexed-types.js';

/** A name is covered when listed, or under a trailing-".*" pattern (`db.*` covers `db.x.y`). */
export function coversCapability(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => (p.endsWith('.*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

/**
 * The OutsideDelegation message of a namespaced object naming `capabilities`: which of them
 * the namespace's Delegation does not cover (or allows at a lower risk level), or that no
 * Delegation covers the namespace; undefined when all are inside. An unregistered
 * capability is judged by name only (its risk level is unknown until registered).
 */
export function outsideDelegation(
  delegation: IndexedDelegation | undefined,
  namespace: string,
  capabilities: readonly string[],
  riskOf: (capability: string) => RiskLevel | undefined,
): string | undefined {
  const names = [...new Set(capabilities)];
  if (names.length === 0) return undefined;
  if (!delegation)
    return `no Delegation covers namespace ${namespace}, so it governs none of: ${names.join(', ')}`;
  const { spec } = delegation;
  const outside = names.flatMap((name) => {
    if (!coversCapability(spec.capabilities, name)) return [`${name} (not delegated)`];
    const risk = riskOf(name);
    return risk !== undefined && !riskLevelAtMost(risk, spec.maxRiskLevel)
      ? [`${name} (risk level ${risk} is above ${spec.maxRiskLevel})`]
      : [];
  });
  if (outside.length === 0) return undefined;
  return `Delegation ${delegation.name} does not let namespace ${namespace} govern: ${outside.join(', ')}`;
}
