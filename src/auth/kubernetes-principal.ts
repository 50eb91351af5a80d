import { KUBERNETES_PRINCIPAL_PREFIX, SERVICE_ACCOUNT_PREFIX, serviceAccountKey } from './api-keys.js';
import type { KubernetesUser, Principal } from './scopes.js';

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** `namespace/name` of a ServiceAccount's username, undefined for any other user. */
export function serviceAccountOfUser(username: string): string | undefined {
  const match = SERVICE_ACCOUNT_USER.exec(username);
  return match ? serviceAccountKey(match[1]!, match[2]!) : undefined;
}

/**
 * The principal name of a Kubernetes user: `serviceaccount:<namespace>/<name>` for a
 * ServiceAccount (what it proposes under when the keys file lists it or an ActorGrant
 * binds it), `kubernetes:<username>` for anyone else.
 */
export function kubernetesPrincipalName(username: string): string {
  const account = serviceAccountOfUser(username);
  return account ? `${SERVICE_ACCOUNT_PREFIX}${account}` : `${KUBERNETES_PRINCIPAL_PREFIX}${username}`;
}

/**
 * A Kubernetes user as a principal: with the scopes and actors of its keys file entry or
 * actor binding (`known`), else with none, so that only RBAC can grant it anything.
 */
export function kubernetesPrincipal(user: KubernetesUser, known: Principal | undefined): Principal {
  if (known) return { ...known, kubernetes: user };
  return { name: kubernetesPrincipalName(user.username), scopes: new Set(), kubernetes: user };
}

/**
 * Every name a decision of this principal may record as its proposer: its own, and for a
 * Kubernetes user also the name its admission-webhook decisions carry.
 */
export function proposerNames(principal: Principal): string[] {
  if (!principal.kubernetes) return [principal.name];
  const admission = `${KUBERNETES_PRINCIPAL_PREFIX}${principal.kubernetes.username}`;
  return admission === principal.name ? [principal.name] : [principal.name, admission];
}
