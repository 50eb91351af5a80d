/** One request against a rate limit: a grant's or a namespace's (semantics.md step 3). */
export interface RateLimitRequest {
  /** Identifies the counter, shared by all replicas: rateLimitKey or namespaceRateLimitKey. */
  key: string;
  maxRequests: number;
  windowSeconds: number;
}

/** `remaining`: requests still admitted in the current window after this one, when known. */
export type RateLimitAdmission = boolean | { admitted: boolean; remaining: number };

/**
 * The answer for several limits asked at once: admitted only when every one admits, and
 * then counted by every one; refused, counted by none. `remaining` follows the requests'
 * order; `refusedBy` is the position of the first limit that refused.
 */
export interface RateLimitAdmissions {
  admitted: boolean;
  remaining: number[];
  refusedBy?: number;
}

/**
 * Counts admitted requests in a sliding window; a rejected request is not counted, so an
 * actor that keeps trying is admitted again as soon as old requests leave the window.
 * Several limits are asked at once, so that a request one limit refuses spends none of
 * the others (a grant's limit and its namespace's budget).
 */
export interface RateLimiter {
  admitAll(
    requests: readonly RateLimitRequest[],
    nowMs: number,
  ): RateLimitAdmissions | Promise<RateLimitAdmissions>;
  /** What admitAll would answer now, without counting anything (dry runs spend no budget). */
  peekAll(
    requests: readonly RateLimitRequest[],
    nowMs: number,
  ): RateLimitAdmissions | Promise<RateLimitAdmissions>;
}

/** The counter key of a grant rate limit; the limit values are not part of it, so editing them keeps the history. */
export function rateLimitKey(actorId: string, capability: string): string {
  // encodeURIComponent escapes '|': every grant key has exactly one, namespace keys none.
  return `${encodeURIComponent(actorId)}|${capability}`;
}

/** The counter key of a namespace's budget (its Delegation's rate limit); never a grant's key. */
export function namespaceRateLimitKey(namespace: string): string {
  return `namespace:${namespace}`;
}

/**
 * What limits with `used` requests in their windows answer together: admitted when every
 * one has room; else refused by the first that has none, and nothing counted.
 */
export function admissions(
  requests: readonly RateLimitRequest[],
  used: readonly number[],
): RateLimitAdmissions {
  const refusedBy = requests.findIndex((request, i) => used[i]! >= request.maxRequests);
  if (refusedBy < 0)
    return { admitted: true, remaining: requests.map((request, i) => request.maxRequests - used[i]! - 1) };
  return {
    admitted: false,
    remaining: requests.map((request, i) => Math.max(0, request.maxRequests - used[i]!)),
    refusedBy,
  };
}

/** One limit's answer out of admissions of one request. */
export function single(answer: RateLimitAdmissions): { admitted: boolean; remaining: number } {
  return { admitted: answer.admitted, remaining: answer.admitted ? answer.remaining[0]! : 0 };
}

/** A limit a decision is charged against: its grant's, or its namespace's budget (issue #38). */
export type ChargedRateLimit =
  | (RateLimitRequest & { scope: 'grant' })
  | (RateLimitRequest & { scope: 'namespace'; namespace: string; delegation: string });
