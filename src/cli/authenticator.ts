import type { Logger } from 'pino';
import type { Authenticator } from '../api/authenticate.js';
import { ApiKeyRegistry, kubeTokenReviewer, TokenReviewAuthenticator } from '../auth/index.js';
import { loadKubeConfig } from './kube-config.js';
import type { ServeOptions } from './serve-options.js';

/**
 * Who may call: the API keys file; in cluster mode also the ServiceAccounts it lists, whose
 * tokens the API server verifies (TokenReview). A known API key never reaches the API server.
 */
export async function openAuthenticator(options: ServeOptions, logger: Logger): Promise<Authenticator> {
  const keys = await ApiKeyRegistry.load(options.apiKeys);
  if (!options.kubernetes) {
    if (keys.serviceAccounts.size > 0)
      logger.warn('serviceAccounts in the API keys file apply only with --kubernetes/--kubeconfig; ignored');
    return keys;
  }
  if (keys.serviceAccounts.size === 0) return keys;
  const tokens = new TokenReviewAuthenticator(
    kubeTokenReviewer(loadKubeConfig(options.kubernetes)),
    keys.serviceAccounts,
  );
  logger.info(
    { service_accounts: [...keys.serviceAccounts.keys()] },
    'ServiceAccount tokens accepted (verified by TokenReview)',
  );
  return {
    authenticate: (credential) => keys.authenticate(credential) ?? tokens.authenticate(credential),
  };
}
