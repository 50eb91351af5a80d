import { ArbiterError } from '../model/index.js';
import { serviceAccountKey, sha256Hex } from './api-keys.js';
import type { Principal } from './scopes.js';

/** What the API server said about a token (authentication.k8s.io/v1 TokenReview status). */
export interface TokenReviewResult {
  authenticated: boolean;
  /** e.g. `system:serviceaccount:<namespace>:<name>`. */
  username?: string;
}

/**
 * Asks the API server about a token. Resolves with its answer; rejects when the review
 * could not be made (unreachable, forbidden, timed out): the caller must not allow then.
 */
export type TokenReviewer = (token: string) => Promise<TokenReviewResult>;

export interface TokenReviewSettings {
  /** How long an accepted token is trusted without asking again. */
  positiveTtlMs: number;
  /** How long a refused token is refused without asking again. */
  negativeTtlMs: number;
  /** Most cached results; the oldest go first. */
  maxEntries: number;
  /** Most reviews under way at once; beyond it requests answer 503. */
  maxInFlight: number;
  /** A review slower than this answers 503. */
  reviewTimeoutMs: number;
}

export const DEFAULT_TOKEN_REVIEW_SETTINGS: TokenReviewSettings = {
  positiveTtlMs: 30_000,
  negativeTtlMs: 5_000,
  maxEntries: 10_000,
  maxInFlight: 64,
  reviewTimeoutMs: 5_000,
};

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;
/** ServiceAccount tokens are JWTs: three base64url segments. Anything else is not sent out. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** `namespace/name` of the ServiceAccount a review authenticated, if it did. */
function accountOf(result: TokenReviewResult): string | undefined {
  if (!result.authenticated || result.username === undefined) return undefined;
  const match = SERVICE_ACCOUNT_USER.exec(result.username);
  return match ? serviceAccountKey(match[1]!, match[2]!) : undefined;
}

interface CachedResult {
  /** `namespace/name` of the ServiceAccount the token authenticated as; undefined: not one. */
  account: string | undefined;
  expiresAtMs: number;
}

/**
 * The ServiceAccounts that may authenticate, by `namespace/name`: the keys file's, and in
 * cluster mode those bound to actors by ActorGrants. Asked on every request, so a changed
 * binding takes effect at once although reviews are cached.
 */
export interface ServiceAccountPrincipals {
  /** How many there are; with none, tokens are not even sent to review. */
  readonly size: number;
  get(account: string): Principal | undefined;
}

/**
 * ServiceAccount tokens as credentials (cluster mode): the API server's TokenReview says
 * whose token it is, the keys file's `serviceAccounts` which scopes that ServiceAccount
 * has. Results are cached per SHA-256 of the token (the token itself is never kept or
 * logged). Fails closed: when the review cannot be made, authenticate rejects with
 * UNAVAILABLE (503) instead of answering.
 */
export class TokenReviewAuthenticator {
  private readonly cache = new Map<string, CachedResult>();
  private readonly inFlight = new Map<string, Promise<string | undefined>>();
  private readonly settings: TokenReviewSettings;

  constructor(
    private readonly review: TokenReviewer,
    /** Principals by `namespace/name` (e.g. ApiKeyRegistry.serviceAccounts). */
    private readonly serviceAccounts: ServiceAccountPrincipals,
    settings: Partial<TokenReviewSettings> = {},
    private readonly nowMs: () => number = Date.now,
  ) {
    this.settings = { ...DEFAULT_TOKEN_REVIEW_SETTINGS, ...settings };
  }

  async authenticate(token: string): Promise<Principal | undefined> {
    if (this.serviceAccounts.size === 0 || !JWT_SHAPE.test(token)) return undefined;
    const digest = sha256Hex(token);
    const cached = this.cache.get(digest);
    if (cached && cached.expiresAtMs > this.nowMs()) return this.principalOf(cached.account);
    this.cache.delete(digest); // expired (if there was one): gone even when the new review fails
    // Concurrent requests with one token share one review.
    let pending = this.inFlight.get(digest);
    if (!pending) {
      if (this.inFlight.size >= this.settings.maxInFlight)
        throw new ArbiterError('UNAVAILABLE', 'too many ServiceAccount token reviews under way; retry');
      pending = this.reviewAndCache(token, digest).finally(() => this.inFlight.delete(digest));
      this.inFlight.set(digest, pending);
    }
    return this.principalOf(await pending);
  }

  /** How many results are cached (for tests and bounds). */
  get cachedCount(): number {
    return this.cache.size;
  }

  private async reviewAndCache(token: string, digest: string): Promise<string | undefined> {
    const account = accountOf(await this.reviewWithTimeout(token));
    const ttlMs = account ? this.settings.positiveTtlMs : this.settings.negativeTtlMs;
    this.remember(digest, { account, expiresAtMs: this.nowMs() + ttlMs });
    return account;
  }

  private async reviewWithTimeout(token: string): Promise<TokenReviewResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ArbiterError(
              'UNAVAILABLE',
              `cannot verify the ServiceAccount token: TokenReview took more than ${this.settings.reviewTimeoutMs} ms`,
            ),
          ),
        this.settings.reviewTimeoutMs,
      );
    });
    try {
      return await Promise.race([this.review(token), timeout]);
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'UNAVAILABLE') throw err;
      throw new ArbiterError(
        'UNAVAILABLE',
        'cannot verify the ServiceAccount token: TokenReview failed',
        undefined,
        {
          cause: err,
        },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private principalOf(account: string | undefined): Principal | undefined {
    return account === undefined ? undefined : this.serviceAccounts.get(account);
  }

  private remember(digest: string, result: CachedResult): void {
    this.cache.delete(digest);
    while (this.cache.size >= this.settings.maxEntries) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      this.cache.delete(oldest.value);
    }
    this.cache.set(digest, result);
  }
}
