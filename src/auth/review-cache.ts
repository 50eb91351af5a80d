import { ArbiterError } from '../model/index.js';

export interface ReviewCacheSettings {
  /** How long a positive answer is trusted without asking again. */
  positiveTtlMs: number;
  /** How long a negative answer stands without asking again. */
  negativeTtlMs: number;
  /** Most cached answers; the oldest go first. */
  maxEntries: number;
  /** Most reviews under way at once; beyond it callers get UNAVAILABLE. */
  maxInFlight: number;
  /** A review slower than this gives UNAVAILABLE. */
  reviewTimeoutMs: number;
}

/** How the failures read, e.g. `cannot verify the ServiceAccount token: TokenReview`. */
export interface ReviewCacheMessages {
  /** Followed by ` failed` or ` took more than N ms`. */
  failure: string;
  /** When maxInFlight reviews are under way. */
  busy: string;
}

interface Cached<T> {
  answer: T;
  expiresAtMs: number;
}

/**
 * The API server's answers to one kind of review (TokenReview, SubjectAccessReview), by
 * key: cached for a short time and bounded in number; concurrent asks for one key share
 * one review. Fails closed: a review that fails, is too slow, or finds maxInFlight under
 * way rejects with UNAVAILABLE (503), and no failure is cached.
 */
export class ReviewCache<T> {
  private readonly cache = new Map<string, Cached<T>>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly settings: ReviewCacheSettings,
    private readonly messages: ReviewCacheMessages,
    /** Which answers get positiveTtlMs (the others negativeTtlMs). */
    private readonly isPositive: (answer: T) => boolean,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The cached answer for `key`, else the answer of `review()` (then cached). */
  async get(key: string, review: () => Promise<T>): Promise<T> {
    const cached = this.cache.get(key);
    if (cached && cached.expiresAtMs > this.nowMs()) return cached.answer;
    this.cache.delete(key); // expired (if there was one): gone even when the new review fails
    let pending = this.inFlight.get(key);
    if (!pending) {
      if (this.inFlight.size >= this.settings.maxInFlight)
        throw new ArbiterError('UNAVAILABLE', this.messages.busy);
      pending = this.reviewAndCache(key, review).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** How many answers are cached (for tests and bounds). */
  get size(): number {
    return this.cache.size;
  }

  private async reviewAndCache(key: string, review: () => Promise<T>): Promise<T> {
    const answer = await this.withTimeout(review);
    const ttlMs = this.isPositive(answer) ? this.settings.positiveTtlMs : this.settings.negativeTtlMs;
    this.remember(key, { answer, expiresAtMs: this.nowMs() + ttlMs });
    return answer;
  }

  private async withTimeout(review: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ArbiterError(
              'UNAVAILABLE',
              `${this.messages.failure} took more than ${this.settings.reviewTimeoutMs} ms`,
            ),
          ),
        this.settings.reviewTimeoutMs,
      );
    });
    try {
      return await Promise.race([review(), timeout]);
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'UNAVAILABLE') throw err;
      throw new ArbiterError('UNAVAILABLE', `${this.messages.failure} failed`, undefined, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  private remember(key: string, cached: Cached<T>): void {
    this.cache.delete(key);
    while (this.cache.size >= this.settings.maxEntries) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      this.cache.delete(oldest.value);
    }
    this.cache.set(key, cached);
  }
}
