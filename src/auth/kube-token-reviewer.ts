import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { reviewFailure } from './kube-api-failure.js';
import type { TokenReviewer } from './token-review-authenticator.js';

/**
 * A TokenReviewer backed by the cluster's authentication.k8s.io/v1 TokenReview API.
 * Without audiences the API server checks the token against its own (--api-audiences).
 */
export function kubeTokenReviewer(kubeConfig: KubeConfig): TokenReviewer {
  const api = kubeConfig.makeApiClient(AuthenticationV1Api);
  return async (token) => {
    try {
      const review = await api.createTokenReview({
        // Stryker disable next-line StringLiteral: the API server takes an empty apiVersion and kind from the URL.
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const user = review.status?.user;
      return {
        authenticated: review.status?.authenticated === true,
        ...(user?.username ? { username: user.username, groups: user.groups ?? [] } : {}),
      };
    } catch (err) {
      throw reviewFailure('TokenReview', err);
    }
  };
}
