import type { GrantConstraints } from '../model/index.js';

/** The applied grant constraints in the API's snake_case (service-interface.md 2.5). */
export function grantConstraints(constraints: GrantConstraints): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const { timeWindow, rateLimit } = constraints;
  if (timeWindow)
    out.time_window = { start: timeWindow.start, end: timeWindow.end, timezone: timeWindow.timezone };
  if (rateLimit)
    out.rate_limit = { max_requests: rateLimit.maxRequests, window_seconds: rateLimit.windowSeconds };
  return out;
}
