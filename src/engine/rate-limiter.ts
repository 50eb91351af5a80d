/** One request against a grant's rate limit (semantics.md step 3). */
export interface RateLimitRequest {
  /** Identifies the counter: one per (actor, capability), shared by all replicas. */
  key: string;
  maxRequests: number;
  windowSeconds: number;
}

/** `remaining`: requests still admitted in the current window after this one, when known. */
export type RateLimitAdmission = boolean | { admitted: boolean; remaining: number };

/**
 * Counts admitted requests in a sliding window; a rejected request is not counted, so an
 * actor that keeps trying is admitted again as soon as old requests leave the window.
 */
export interface RateLimiter {
  admit(request: RateLimitRequest, nowMs: number): RateLimitAdmission | Promise<RateLimitAdmission>;
  /** What admit would answer now, without counting anything (dry runs spend no budget). */
  peek(request: RateLimitRequest, nowMs: number): RateLimitAdmission | Promise<RateLimitAdmission>;
}

/** The counter key of a grant rate limit; the limit values are not part of it, so editing them keeps the history. */
export function rateLimitKey(actorId: string, capability: string): string {
  return `${encodeURIComponent(actorId)}|${capability}`;
}
