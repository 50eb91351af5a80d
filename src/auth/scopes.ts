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
   * Set for a token the API server authenticated, where RBAC may grant what the scopes
   * lack (rbac-access.ts). API keys have none.
   */
  kubernetes?: KubernetesUser;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has('admin') || principal.scopes.has(scope);
}

export function mayActAs(principal: Principal, actorId: string): boolean {
  return principal.actors === undefined || principal.actors.has(actorId);
}
