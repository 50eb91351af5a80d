import type { Evaluation, Tier } from './proposal.js';

/**
 * Which tier's policies decided: the trail names it when the actor's namespace has rules
 * for the capability; else the cluster's alone, once the policies were asked (authority
 * passed); null when the request was denied before that.
 */
export function decidingTier(evaluation: Pick<Evaluation, 'tier' | 'authority_check'>): Tier | null {
  return evaluation.tier ?? (evaluation.authority_check === 'pass' ? 'cluster' : null);
}
