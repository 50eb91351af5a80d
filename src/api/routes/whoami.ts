import { Router } from 'express';
import {
  RBAC_SCOPES,
  rbacAttributes,
  SCOPES,
  type Principal,
  type RbacAuthority,
  type Scope,
} from '../../auth/index.js';
import { requireCaller } from '../authenticate.js';
import type { ApiDependencies } from '../dependencies.js';

/** The verb that stands for a scope as a whole when RBAC is asked without a resource name. */
function probeVerb(scope: Scope): string | undefined {
  const verbs = RBAC_SCOPES[scope]?.verbs;
  return verbs?.includes('list') ? 'list' : verbs?.[0];
}

/**
 * The scopes a caller holds: its own, and for a Kubernetes user those RBAC grants it for
 * every resource name (a Role limited to some capabilities is not counted here; the
 * routes still ask per request).
 */
async function effectiveScopes(principal: Principal, rbac: RbacAuthority | undefined): Promise<Scope[]> {
  const held = SCOPES.filter((s) => principal.scopes.has(s));
  const user = principal.kubernetes;
  if (!rbac || !user || principal.scopes.has('admin')) return held;
  const candidates = SCOPES.filter((s) => !principal.scopes.has(s) && probeVerb(s) !== undefined);
  const granted = await Promise.all(
    candidates.map((s) => rbac.allows(user, rbacAttributes(s, probeVerb(s)!)!)),
  );
  return [...held, ...candidates.filter((_, i) => granted[i])];
}

/** GET /auth/whoami: who the presented credential is and what it may do (for the console). */
export function whoamiRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const caller = requireCaller(deps.authenticator, deps.keyLimiter, () => deps.clock().getTime());
  router.get('/auth/whoami', caller, async (req, res) => {
    const principal = req.principal!;
    res.json({
      principal: principal.name,
      scopes: await effectiveScopes(principal, deps.authenticator.rbac),
      actors: principal.actors ? [...principal.actors].sort() : null,
      // A key limited to namespaces: what it sees and manages (auth/namespace-access.ts).
      namespaces: principal.namespaces ? [...principal.namespaces].sort() : null,
      kubernetes: principal.kubernetes
        ? { username: principal.kubernetes.username, groups: [...principal.kubernetes.groups] }
        : null,
    });
  });
  return router;
}
