import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The username the API server gives Arbiter's own requests, so the configuration webhook
 * can let them through (status writes, API writes): the impersonated user, else the `sub`
 * of a ServiceAccount token (in a pod: the mounted token file). Reading a JWT's payload
 * without checking its signature is fine here: it only says who we are, to ourselves.
 * Undefined when it cannot be told (a client certificate); our writes are then validated
 * like anyone's.
 */
export function ownUsername(kubeConfig: KubeConfig): string | undefined {
  const user = kubeConfig.getCurrentUser();
  if (!user) return undefined;
  if (user.impersonateUser) return user.impersonateUser;
  const token =
    user.token ??
    tokenFromFile((user.authProvider as { config?: { tokenFile?: string } })?.config?.tokenFile);
  return token === undefined ? undefined : subjectOf(token);
}

function tokenFromFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The `sub` claim of a ServiceAccount JWT (`system:serviceaccount:<ns>:<name>`). */
export function subjectOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' && claims.sub.startsWith('system:serviceaccount:')
      ? claims.sub
      : undefined;
  } catch {
    return undefined;
  }
}
