import type { IndexedCapability } from '../index/index.js';
import type { Proposal } from '../model/index.js';
import type { RiskWeights } from './engine-settings.js';

/**
 * semantics.md step 4: base by risk level + actor type + production environment, clamped
 * to [0,1] and rounded to 4 decimals so that float noise (0.1 + 0.2) never reaches the
 * trail or a threshold comparison.
 */
export function riskScore(
  capability: IndexedCapability | undefined,
  proposal: Proposal,
  weights: RiskWeights,
): number {
  const base = weights.riskLevel[capability?.spec.riskLevel ?? 'critical'];
  const actor = weights.actorType[proposal.actor.type] ?? 0;
  const production =
    proposal.context?.metadata?.environment === 'production' ? weights.productionEnvironment : 0;
  const score = Math.round((base + actor + production) * 10_000) / 10_000;
  return Math.min(1, Math.max(0, score));
}
