import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { reviewFailure } from './kube-api-failure.js';
import type { ResourceAttributes } from './rbac-access.js';
import type { KubernetesUser } from './scopes.js';

/**
 * Asks the API server whether `user` may do what `attributes` say. Resolves with its
 * answer; rejects when the review could not be made: the caller must not allow then.
 */
export type SubjectAccessReviewer = (
  user: KubernetesUser,
  attributes: ResourceAttributes,
) => Promise<boolean>;

/**
 * A SubjectAccessReviewer backed by the cluster's authorization.k8s.io/v1 API. RBAC decides
 * on the username and the groups, so those are all that is sent (no uid, no extra).
 */
export function kubeSubjectAccessReviewer(kubeConfig: KubeConfig): SubjectAccessReviewer {
  const api = kubeConfig.makeApiClient(AuthorizationV1Api);
  return async (user, attributes) => {
    try {
      const review = await api.createSubjectAccessReview({
        body: {
          // Stryker disable next-line StringLiteral: the API server takes an empty apiVersion and kind from the URL.
          apiVersion: 'authorization.k8s.io/v1',
          // Stryker disable next-line StringLiteral: as above.
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            groups: [...user.groups],
            resourceAttributes: {
              group: attributes.group,
              resource: attributes.resource,
              verb: attributes.verb,
              ...(attributes.name === undefined ? {} : { name: attributes.name }),
              ...(attributes.namespace === undefined ? {} : { namespace: attributes.namespace }),
            },
          },
        },
      });
      return review.status?.allowed === true;
    } catch (err) {
      throw reviewFailure('SubjectAccessReview', err);
    }
  };
}
