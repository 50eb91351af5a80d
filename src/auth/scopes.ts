import { parseNamespacedActorId } from '../model/namespaced-actor-id.js';
import { mayManageNamespace } from './namespace-access.js';

/** Scopes of semantics.md ("HTTP conventions"); admin implies every other. */
export const SCOPES = [
  'governance:propose',
  'governance:read',
  'governance:review',
  'capabilities:manage',
  'policies:manage',
  'grants:manage',
  'audit:read',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A user as the API server authenticated it (TokenReview status.user). */
export interface KubernetesUser {
  username: string;
  groups: readonly string[];
}

/** Who is calling: an API key (or, in a cluster, a Kubernetes user) with its scopes. */
export interface Principal {
  name: string;
  scopes: ReadonlySet<Scope>;
  /** When set, the principal may only propose for these actor ids. */
  actors?: ReadonlySet<string>;
  /**
   * When set, the principal sees only the records of these namespaces' actors and may
   * manage only these namespaces' objects (namespace-access.ts); never cluster ones.
   */
  namespaces?: ReadonlySet<string>;
  /**
   * Set for a token the API server authenticated, where RBAC may grant what the scopes
   * lack (rbac-access.ts). API keys have none.
   */
  kubernetes?: KubernetesUser;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has('admin') || principal.scopes.has(scope);
}

/** Its actors when listed; for a key limited to namespaces, only actors of those namespaces. */
export function mayActAs(principal: Principal, actorId: string): boolean {
  return (
    (principal.actors === undefined || principal.actors.has(actorId)) &&
    mayManageNamespace(principal, parseNamespacedActorId(actorId)?.namespace)
  );
}
