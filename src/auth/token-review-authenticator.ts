import { sha256Hex } from './api-keys.js';
import { kubernetesPrincipal, serviceAccountOfUser } from './kubernetes-principal.js';
import { ReviewCache, type ReviewCacheSettings } from './review-cache.js';
import type { KubernetesUser, Principal } from './scopes.js';

/** What the API server said about a token (authentication.k8s.io/v1 TokenReview status). */
export interface TokenReviewResult {
  authenticated: boolean;
  /** e.g. `system:serviceaccount:<namespace>:<name>`. */
  username?: string;
  /** The user's groups, e.g. `system:serviceaccounts`, `system:authenticated`. */
  groups?: string[];
}

/**
 * Asks the API server about a token. Resolves with its answer; rejects when the review
 * could not be made (unreachable, forbidden, timed out): the caller must not allow then.
 */
export type TokenReviewer = (token: string) => Promise<TokenReviewResult>;

/** positiveTtlMs: an accepted token; negativeTtlMs: a refused one. */
export type TokenReviewSettings = ReviewCacheSettings;

export const DEFAULT_TOKEN_REVIEW_SETTINGS: TokenReviewSettings = {
  positiveTtlMs: 30_000,
  negativeTtlMs: 5_000,
  maxEntries: 10_000,
  maxInFlight: 64,
  reviewTimeoutMs: 5_000,
};

/** ServiceAccount tokens are JWTs: three base64url segments. Anything else is not sent out. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/**
 * Any bearer token (RFC 6750 b64token) of a sane length: users' tokens may be OIDC JWTs,
 * static tokens or a cloud's own format.
 */
const BEARER_TOKEN_SHAPE = /^[A-Za-z0-9._~+/-]+=*$/;
const MAX_TOKEN_LENGTH = 16_384;

/** The user a review authenticated, if it did. */
function userOf(result: TokenReviewResult): KubernetesUser | undefined {
  if (!result.authenticated || result.username === undefined) return undefined;
  return { username: result.username, groups: result.groups ?? [] };
}

/**
 * The ServiceAccounts that may authenticate, by `namespace/name`: the keys file's, and in
 * cluster mode those bound to actors by ActorGrants. Asked on every request, so a changed
 * binding takes effect at once although reviews are cached.
 */
export interface ServiceAccountPrincipals {
  /** How many there are; with none, `authenticate` does not even send tokens to review. */
  readonly size: number;
  get(account: string): Principal | undefined;
}

/**
 * Kubernetes tokens as credentials (cluster mode): the API server's TokenReview says whose
 * token it is. `authenticate` accepts the ServiceAccounts of the directory with their
 * scopes; `authenticateAnyUser` accepts every user the API server does, for RBAC to
 * decide on. Results are cached per SHA-256 of the token (the token itself is never kept
 * or logged). Fails closed: when the review cannot be made, both reject with UNAVAILABLE
 * (503) instead of answering.
 */
export class TokenReviewAuthenticator {
  private readonly reviews: ReviewCache<KubernetesUser | undefined>;

  constructor(
    private readonly review: TokenReviewer,
    /** Principals by `namespace/name` (e.g. ApiKeyRegistry.serviceAccounts). */
    private readonly serviceAccounts: ServiceAccountPrincipals,
    settings: Partial<TokenReviewSettings> = {},
    nowMs: () => number = Date.now,
  ) {
    this.reviews = new ReviewCache<KubernetesUser | undefined>(
      { ...DEFAULT_TOKEN_REVIEW_SETTINGS, ...settings },
      {
        failure: 'cannot verify the ServiceAccount token: TokenReview',
        busy: 'too many ServiceAccount token reviews under way; retry',
      },
      (user) => user !== undefined,
      nowMs,
    );
  }

  /** The principal of a listed or bound ServiceAccount's token; undefined for anything else. */
  async authenticate(token: string): Promise<Principal | undefined> {
    if (this.serviceAccounts.size === 0 || !JWT_SHAPE.test(token)) return undefined;
    const user = await this.userOf(token);
    const account = user && serviceAccountOfUser(user.username);
    return account === undefined ? undefined : this.serviceAccounts.get(account);
  }

  /**
   * The principal of any token the API server authenticates, with the user attached for
   * RBAC: a listed or bound ServiceAccount keeps its scopes and actors, anyone else has none.
   */
  async authenticateAnyUser(token: string): Promise<Principal | undefined> {
    if (token.length > MAX_TOKEN_LENGTH || !BEARER_TOKEN_SHAPE.test(token)) return undefined;
    const user = await this.userOf(token);
    if (!user) return undefined;
    const account = serviceAccountOfUser(user.username);
    return kubernetesPrincipal(user, account === undefined ? undefined : this.serviceAccounts.get(account));
  }

  /** How many results are cached (for tests and bounds). */
  get cachedCount(): number {
    return this.reviews.size;
  }

  private userOf(token: string): Promise<KubernetesUser | undefined> {
    return this.reviews.get(sha256Hex(token), async () => userOf(await this.review(token)));
  }
}
