import type { Logger } from 'pino';
import type { Authenticator } from '../api/authenticate.js';
import {
  ApiKeyRegistry,
  kubeSubjectAccessReviewer,
  kubeTokenReviewer,
  SERVICE_ACCOUNT_PREFIX,
  SubjectAccessAuthorizer,
  TokenReviewAuthenticator,
  type Principal,
  type ServiceAccountPrincipals,
} from '../auth/index.js';
import type { IndexSnapshot } from '../index/index.js';
import { subjectUsername } from '../model/index.js';
import { loadKubeConfig } from './kube-config.js';
import type { ServeOptions } from './serve-options.js';

/**
 * Who may call: the API keys file; in cluster mode also ServiceAccounts, whose tokens the
 * API server verifies (TokenReview): those the keys file lists, with its scopes, and those
 * an ActorGrant binds to an actor (spec.actor.subjects), which may propose for that actor
 * only. On the routes RBAC can grant (reads, review, the audit log: auth/rbac-access.ts)
 * any Kubernetes user is a caller too, and the API server's SubjectAccessReview decides
 * what its scopes lack. A known API key never reaches the API server.
 */
export async function openAuthenticator(
  options: ServeOptions,
  logger: Logger,
  index: { current(): IndexSnapshot },
): Promise<Authenticator> {
  const keys = await ApiKeyRegistry.load(options.apiKeys);
  if (!options.kubernetes) {
    if (keys.serviceAccounts.size > 0)
      logger.warn('serviceAccounts in the API keys file apply only with --kubernetes/--kubeconfig; ignored');
    return keys;
  }
  const kubeConfig = loadKubeConfig(options.kubernetes);
  const tokens = new TokenReviewAuthenticator(
    kubeTokenReviewer(kubeConfig),
    serviceAccountPrincipals(keys, index),
  );
  const access = new SubjectAccessAuthorizer(kubeSubjectAccessReviewer(kubeConfig));
  logger.info(
    { service_accounts: [...keys.serviceAccounts.keys()] },
    'ServiceAccount tokens accepted (verified by TokenReview): those listed, and those bound to actors',
  );
  logger.info(
    'Kubernetes users may read decisions, review them and read the audit log as RBAC allows (SubjectAccessReview)',
  );
  return {
    authenticate: (credential) => keys.authenticate(credential) ?? tokens.authenticate(credential),
    rbac: {
      authenticate: async (credential) =>
        keys.authenticate(credential) ?? tokens.authenticateAnyUser(credential),
      allows: (user, attributes) => access.allows(user, attributes),
    },
  };
}

/** The keys file's entry wins; a ServiceAccount only bound to an actor may propose for it. */
function serviceAccountPrincipals(
  keys: ApiKeyRegistry,
  index: { current(): IndexSnapshot },
): ServiceAccountPrincipals {
  return {
    get size() {
      return keys.serviceAccounts.size + index.current().counts.boundIdentities;
    },
    get(account: string): Principal | undefined {
      const listed = keys.serviceAccounts.get(account);
      if (listed) return listed;
      const [namespace, name] = account.split('/');
      const username = subjectUsername({ kind: 'ServiceAccount', namespace, name: name ?? '' });
      const binding = index.current().actorOfIdentity(username);
      if (!binding) return undefined;
      return {
        name: `${SERVICE_ACCOUNT_PREFIX}${account}`,
        scopes: new Set(['governance:propose']),
        actors: new Set([binding.actorId]),
      };
    },
  };
}
