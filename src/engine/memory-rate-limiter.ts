import {
  admissions,
  single,
  type RateLimitAdmissions,
  type RateLimiter,
  type RateLimitRequest,
} from './rate-limiter.js';

interface Log {
  /** Admission times (ms), oldest first; entries before `head` are expired. */
  times: number[];
  head: number;
  windowMs: number;
}

export interface MemoryRateLimiterOptions {
  /** Expired keys are swept at most this often (ms of the `nowMs` passed in). */
  sweepIntervalMs?: number;
}

/**
 * Exact sliding-window log for one process (embedded mode, tests). Memory is bounded by
 * the requests admitted within each live window: a key holds at most maxRequests times,
 * and keys whose window has passed are swept.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, Log>();
  private readonly sweepIntervalMs: number;
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  }

  admit(request: RateLimitRequest, nowMs: number): { admitted: boolean; remaining: number } {
    return single(this.admitAll([request], nowMs));
  }

  peek(request: RateLimitRequest, nowMs: number): { admitted: boolean; remaining: number } {
    return single(this.peekAll([request], nowMs));
  }

  admitAll(requests: readonly RateLimitRequest[], nowMs: number): RateLimitAdmissions {
    this.sweep(nowMs);
    const logs = requests.map((request) => this.liveLog(request, nowMs));
    const answer = admissions(
      requests,
      logs.map((log) => log.times.length - log.head),
    );
    if (answer.admitted) for (const log of logs) log.times.push(nowMs);
    return answer;
  }

  peekAll(requests: readonly RateLimitRequest[], nowMs: number): RateLimitAdmissions {
    return admissions(
      requests,
      requests.map((request) => {
        const cutoff = nowMs - request.windowSeconds * 1000;
        return this.logs.get(request.key)?.times.filter((t) => t > cutoff).length ?? 0;
      }),
    );
  }

  /** Number of keys held; for tests and metrics. */
  get size(): number {
    return this.logs.size;
  }

  /** Admission times held in memory over all keys, expired ones not yet compacted included. */
  get heldTimes(): number {
    let held = 0;
    for (const log of this.logs.values()) held += log.times.length;
    return held;
  }

  /** The request's log with what left its window expired, kept in the map. */
  private liveLog(request: RateLimitRequest, nowMs: number): Log {
    const windowMs = request.windowSeconds * 1000;
    const log = this.logs.get(request.key) ?? { times: [], head: 0, windowMs };
    log.windowMs = windowMs;
    expire(log, nowMs);
    this.logs.set(request.key, log);
    return log;
  }

  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < this.sweepIntervalMs) return;
    this.lastSweepMs = nowMs;
    for (const [key, log] of this.logs) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || newest <= nowMs - log.windowMs) this.logs.delete(key);
    }
  }
}

/** A request admitted at t counts while t > now - window. */
function expire(log: Log, nowMs: number): void {
  const cutoff = nowMs - log.windowMs;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: past the end the comparison with undefined is false, so the bound is only a guard.
  while (log.head < log.times.length && log.times[log.head]! <= cutoff) log.head += 1;
  // Compact once the dead prefix dominates, keeping pushes and expiry amortised O(1).
  // Stryker disable next-line EqualityOperator,ConditionalExpression,LogicalOperator: when to compact changes only the cost; the bound on memory is tested.
  if (log.head > 32 && log.head * 2 > log.times.length) {
    log.times = log.times.slice(log.head);
    log.head = 0;
  }
}
