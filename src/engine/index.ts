export { evaluateProposal, type PreliminaryDecision } from './evaluate-proposal.js';
export { completeDecision } from './complete-decision.js';
export { decide } from './decide.js';
export {
  DEFAULT_ENGINE_SETTINGS,
  resolveEngineSettings,
  type EngineSettings,
  type EngineSettingsOverrides,
  type RiskWeights,
} from './engine-settings.js';
export {
  admissions,
  namespaceRateLimitKey,
  rateLimitKey,
  single,
  type ChargedRateLimit,
  type RateLimiter,
  type RateLimitRequest,
  type RateLimitAdmission,
  type RateLimitAdmissions,
} from './rate-limiter.js';
export { MemoryRateLimiter, type MemoryRateLimiterOptions } from './memory-rate-limiter.js';
export { riskScore } from './risk-score.js';
export { checkTimeWindow, type WindowVerdict } from './time-window.js';
export { unreachableRules, type RuleFinding } from './unreachable-rules.js';
export { definitionChanged } from './capability-check.js';
