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

/** Who is calling: an API key (or, in a cluster, a ServiceAccount) with its scopes. */
export interface Principal {
  name: string;
  scopes: ReadonlySet<Scope>;
  /** When set, the principal may only propose for these actor ids. */
  actors?: ReadonlySet<string>;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has('admin') || principal.scopes.has(scope);
}

export function mayActAs(principal: Principal, actorId: string): boolean {
  return principal.actors === undefined || principal.actors.has(actorId);
}
