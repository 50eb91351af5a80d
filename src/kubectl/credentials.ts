import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { PluginError } from './plugin-error.js';

export interface TokenSources {
  /** --token */
  flag?: string;
  /** $ARBITER_TOKEN */
  environment?: string;
  /** Loaded only when neither of the above is set. */
  kubeConfig: () => Promise<KubeConfig>;
}

/**
 * The bearer token presented to Arbiter: --token, else $ARBITER_TOKEN, else the kubeconfig
 * user's token (a static token, a token file, an exec or OIDC plugin), which Arbiter
 * accepts in cluster mode when the API server does (TokenReview).
 */
export async function arbiterToken(sources: TokenSources): Promise<string> {
  if (sources.flag) return sources.flag;
  if (sources.environment) return sources.environment;
  let kubeConfig: KubeConfig;
  try {
    kubeConfig = await sources.kubeConfig();
  } catch (err) {
    throw new PluginError(
      `no token: pass --token, set ARBITER_TOKEN, or use a kubeconfig whose user has one (${(err as Error).message})`,
      1,
      { cause: err },
    );
  }
  const token = await bearerTokenOf(kubeConfig);
  if (token) return token;
  throw new PluginError(
    `no token: pass --token or set ARBITER_TOKEN (the kubeconfig user "${kubeConfig.getCurrentUser()?.name}" ` +
      'has no bearer token; a client certificate cannot be passed on to Arbiter)',
  );
}

/** The token client-node would send to the API server, exec and OIDC plugins included. */
export async function bearerTokenOf(kubeConfig: KubeConfig): Promise<string | undefined> {
  const options: RequestOptions = {};
  try {
    await kubeConfig.applyToHTTPSOptions(options);
  } catch (err) {
    throw new PluginError(`cannot get the kubeconfig user's credentials: ${(err as Error).message}`, 1, {
      cause: err,
    });
  }
  const header = (options.headers as Record<string, unknown> | undefined)?.Authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
  return match?.[1];
}
