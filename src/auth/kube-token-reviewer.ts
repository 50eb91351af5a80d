import { ApiException, AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { TokenReviewer } from './token-review-authenticator.js';

/** The Status message of a refusal, if the body has one (never the request, so never the token). */
function statusMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      // Not JSON (a proxy's error page?): a string has no message.
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? `: ${message.slice(0, 512)}` : '';
}

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
      return {
        authenticated: review.status?.authenticated === true,
        ...(review.status?.user?.username ? { username: review.status.user.username } : {}),
      };
    } catch (err) {
      // Keep only what identifies the failure: an exception could carry request details.
      if (err instanceof ApiException)
        throw new Error(`TokenReview answered HTTP ${err.code}${statusMessage(err.body)}`);
      throw err;
    }
  };
}
