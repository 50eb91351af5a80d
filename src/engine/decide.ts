import type { IndexSnapshot } from '../index/index.js';
import type { EngineDecision, Proposal } from '../model/index.js';
import { completeDecision } from './complete-decision.js';
import type { EngineSettings } from './engine-settings.js';
import { evaluateProposal } from './evaluate-proposal.js';
import type { MemoryRateLimiter } from './memory-rate-limiter.js';

/** Both phases with the in-memory limiter, synchronously (tests, embedded tools). */
export function decide(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  settings: EngineSettings,
  limiter: MemoryRateLimiter,
): EngineDecision {
  const preliminary = evaluateProposal(snapshot, proposal, now, settings);
  return completeDecision(preliminary, limiter.admitAll(preliminary.rateLimits, now.getTime()));
}
