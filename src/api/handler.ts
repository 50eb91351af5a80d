import type { Request, RequestHandler, Response } from 'express';
import type { Scope } from '../auth/index.js';
import { requireScope, type RbacRequest } from './authenticate.js';
import type { ApiDependencies } from './dependencies.js';

/**
 * Route helpers: `guard(scope)` authenticates and authorises (`rbac`: what to ask RBAC for
 * a Kubernetes user, when not a plain read); `principalOf` names the caller.
 */
export function makeGuard(deps: ApiDependencies): (scope: Scope, rbac?: RbacRequest) => RequestHandler {
  const now = () => deps.clock().getTime();
  return (scope, rbac) => requireScope(deps.authenticator, deps.keyLimiter, scope, now, rbac);
}

export function principalOf(req: Request): string {
  return req.principal?.name ?? 'anonymous';
}

/** Express query values may be arrays or objects (?a=1&a=2, ?a[b]=1): only plain strings pass. */
export function stringQuery(req: Request): Record<string, unknown> {
  return { ...(req.query as Record<string, unknown>) };
}

export type Handler = (req: Request, res: Response) => Promise<void> | void;
