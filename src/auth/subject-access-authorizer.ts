import { sha256Hex } from './api-keys.js';
import type { SubjectAccessReviewer } from './kube-subject-access-reviewer.js';
import type { ResourceAttributes } from './rbac-access.js';
import { ReviewCache, type ReviewCacheSettings } from './review-cache.js';
import type { KubernetesUser } from './scopes.js';

/**
 * Short, so that a RoleBinding removed stops working within seconds, a new one starts
 * working within seconds; RBAC answers change seldom, reviewers click in bursts.
 */
export const DEFAULT_ACCESS_REVIEW_SETTINGS: ReviewCacheSettings = {
  positiveTtlMs: 10_000,
  negativeTtlMs: 5_000,
  maxEntries: 10_000,
  maxInFlight: 64,
  reviewTimeoutMs: 5_000,
};

/**
 * RBAC's answers (SubjectAccessReview) for Kubernetes users, cached per user, groups and
 * request. Fails closed: when the API server cannot answer, `allows` rejects with
 * UNAVAILABLE (503), never with an answer.
 */
export class SubjectAccessAuthorizer {
  private readonly answers: ReviewCache<boolean>;

  constructor(
    private readonly review: SubjectAccessReviewer,
    settings: Partial<ReviewCacheSettings> = {},
    nowMs: () => number = Date.now,
  ) {
    this.answers = new ReviewCache<boolean>(
      { ...DEFAULT_ACCESS_REVIEW_SETTINGS, ...settings },
      {
        failure: "cannot check the caller's permissions: SubjectAccessReview",
        busy: 'too many SubjectAccessReviews under way; retry',
      },
      (allowed) => allowed,
      nowMs,
    );
  }

  allows(user: KubernetesUser, attributes: ResourceAttributes): Promise<boolean> {
    // Groups are a set: their order must not make two entries of one question.
    const question = [
      user.username,
      [...user.groups].sort(),
      attributes.group,
      attributes.resource,
      attributes.verb,
      attributes.name ?? null,
      attributes.namespace ?? null,
    ];
    return this.answers.get(sha256Hex(JSON.stringify(question)), () => this.review(user, attributes));
  }

  /** How many answers are cached (for tests and bounds). */
  get cachedCount(): number {
    return this.answers.size;
  }
}
