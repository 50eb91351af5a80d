/**
 * The service's own per-key rate limit (not a grant's rate_limit, which is a decision):
 * a token bucket per principal. Pure state, clock injected.
 */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed (0 when allowed). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class KeyRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;

  constructor(
    private readonly requestsPerSecond: number,
    private readonly burst: number,
  ) {
    this.refillPerMs = requestsPerSecond / 1000;
  }

  take(key: string, nowMs: number): RateLimitState {
    const bucket = this.refill(key, nowMs);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const missing = this.burst - bucket.tokens;
    return {
      allowed,
      limit: this.burst,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil(missing / this.requestsPerSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / this.requestsPerSecond)),
    };
  }

  private refill(key: string, nowMs: number): Bucket {
    const bucket = this.buckets.get(key);
    if (!bucket) {
      const fresh = { tokens: this.burst, updatedMs: nowMs };
      this.buckets.set(key, fresh);
      return fresh;
    }
    const elapsed = Math.max(0, nowMs - bucket.updatedMs);
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsed * this.refillPerMs);
    bucket.updatedMs = nowMs;
    return bucket;
  }
}
