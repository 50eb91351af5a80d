import type { Request, RequestHandler } from 'express';
import {
  ARBITER_API_GROUP,
  describeAccess,
  hasScope,
  rbacAttributes,
  readVerb,
  RBAC_SCOPES,
  SEES_EVERYTHING,
  seesNamespaces,
  seesNamespacesRbacAllows,
  visibilityOf,
  type KeyRateLimiter,
  type Principal,
  type RbacAuthority,
  type RecordVisibility,
  type ResourceAttributes,
  type Scope,
} from '../auth/index.js';
import { ArbiterError } from '../model/index.js';

/** Turns a presented credential into a principal, or undefined when it is not valid. */
export interface Authenticator {
  authenticate(credential: string): Promise<Principal | undefined> | Principal | undefined;
  /**
   * Cluster mode: on routes whose scope RBAC can grant (auth/rbac-access.ts), any
   * Kubernetes user is a caller, and RBAC gives it what its scopes lack.
   */
  readonly rbac?: RbacAuthority;
}

/** Where the steps below put their response headers (express's res, or the propose lane's list). */
export type SetHeader = (name: string, value: string) => void;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Step 1: the caller behind an Authorization header, or UNAUTHENTICATED. */
export async function identifyCaller(
  authenticator: Pick<Authenticator, 'authenticate'>,
  authorization: string | undefined,
  setHeader: SetHeader,
): Promise<Principal> {
  const credential = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  if (!credential) {
    setHeader('WWW-Authenticate', 'Bearer realm="arbiter"');
    throw new ArbiterError(
      'UNAUTHENTICATED',
      'missing or malformed Authorization header; use "Bearer <key>"',
    );
  }
  const principal = await authenticator.authenticate(credential);
  if (!principal) {
    setHeader('WWW-Authenticate', 'Bearer realm="arbiter", error="invalid_token"');
    throw new ArbiterError('UNAUTHENTICATED', 'the presented key is not valid');
  }
  return principal;
}

function lacksScope(principal: Principal, scope: Scope): ArbiterError {
  return new ArbiterError('FORBIDDEN', `key "${principal.name}" lacks the scope ${scope}`);
}

/** The per-key rate limit: takes a token or throws RATE_LIMITED. */
function takeRateLimit(
  principal: Principal,
  limiter: KeyRateLimiter,
  nowMs: number,
  setHeader: SetHeader,
): void {
  const state = limiter.take(principal.name, nowMs);
  setHeader('X-RateLimit-Limit', String(state.limit));
  setHeader('X-RateLimit-Remaining', String(state.remaining));
  setHeader('X-RateLimit-Reset', String(state.resetSeconds));
  if (!state.allowed) {
    setHeader('Retry-After', String(state.retryAfterSeconds));
    throw new ArbiterError(
      'RATE_LIMITED',
      `rate limit of key "${principal.name}" exceeded; retry after ${state.retryAfterSeconds} s`,
    );
  }
}

/** Step 2: the scope check, then the per-key rate limit (a refused caller costs no tokens). */
export function permitCaller(
  principal: Principal,
  scope: Scope,
  limiter: KeyRateLimiter,
  nowMs: number,
  setHeader: SetHeader,
): void {
  if (!hasScope(principal, scope)) throw lacksScope(principal, scope);
  takeRateLimit(principal, limiter, nowMs, setHeader);
}

/** What a route asks RBAC for, where it differs from a read (auth/rbac-access.ts). */
export interface RbacRequest {
  /** e.g. `approve`; default `get` for a route with parameters (one item), else `list`. */
  verb?: string;
  /** The resourceName RBAC rules may be limited to, e.g. the decision's capability. */
  name?: (req: Request) => Promise<string>;
  /**
   * The namespace whose RoleBindings may allow this too (a review a namespace's reviewers
   * may settle), undefined when only cluster scope may. A key limited to namespaces needs
   * it to be one of them.
   */
  namespace?: (req: Request) => Promise<string | undefined>;
  /**
   * The route shows each caller only the records it may see (req.visibility), or checks
   * the namespace itself: callers limited to namespaces may call it. Every other route is
   * about the whole cluster and refuses them.
   */
  perNamespace?: boolean;
  /**
   * A resource of ARBITER_API_GROUP (e.g. `namespacedpolicies`): a Kubernetes user without
   * the scope may call the route when RBAC allows it `verb` on that resource in
   * `namespace`, as kubectl would need to write the object itself.
   */
  resource?: string;
}

function clusterRouteRefused(principal: Principal): ArbiterError {
  const namespaces = [...(principal.namespaces ?? [])].join(', ');
  return new ArbiterError(
    'FORBIDDEN',
    `key "${principal.name}" is limited to the namespaces ${namespaces}; this route is about the whole cluster`,
  );
}

/** Step 2 for a principal with the scope: its key's namespaces, when limited, must allow the route. */
async function permitByKey(
  principal: Principal,
  request: RbacRequest,
  req: Request,
): Promise<RecordVisibility> {
  if (!principal.namespaces) return SEES_EVERYTHING;
  if (!request.perNamespace) throw clusterRouteRefused(principal);
  if (request.namespace) {
    const namespace = await request.namespace(req);
    if (namespace === undefined || !principal.namespaces.has(namespace)) throw clusterRouteRefused(principal);
  }
  return visibilityOf(principal);
}

/**
 * Step 2 for a principal without the scope: RBAC's answer for its Kubernetes user, when
 * RBAC can grant the scope at all; FORBIDDEN otherwise. Cluster scope allows everything;
 * else a review may be allowed in its namespace (request.namespace), and a route that
 * filters records lets the caller see those of the namespaces RBAC allows. UNAVAILABLE
 * when the API server cannot answer (fail closed).
 */
async function permitByRbac(
  rbac: RbacAuthority | undefined,
  principal: Principal,
  scope: Scope,
  verb: string,
  request: RbacRequest,
  req: Request,
): Promise<RecordVisibility> {
  const user = principal.kubernetes;
  if (!rbac || !user || !rbacAttributes(scope, verb)) throw lacksScope(principal, scope);
  const name = await request.name?.(req);
  const attributes = rbacAttributes(scope, verb, name)!;
  if (await rbac.allows(user, attributes)) return SEES_EVERYTHING;
  const namespace = await request.namespace?.(req);
  if (namespace !== undefined && (await rbac.allows(user, rbacAttributes(scope, verb, name, namespace)!)))
    return seesNamespaces(new Set([namespace]));
  // A route that names its one namespace is settled by the answers above.
  if (request.perNamespace && !request.namespace) return seesNamespacesRbacAllows(rbac, user, scope, verb);
  const alsoAsked = namespace === undefined ? '' : `, neither at cluster scope nor in namespace ${namespace}`;
  throw new ArbiterError(
    'FORBIDDEN',
    `"${principal.name}" lacks the scope ${scope}, and RBAC does not let user "${user.username}" ${describeAccess(attributes)}${alsoAsked}`,
  );
}

/**
 * Step 2 on a route naming its resource: RBAC's answer for `verb` on it in the route's
 * namespace, or, for a read, the scope's own at cluster scope.
 */
async function permitOnResource(
  rbac: RbacAuthority | undefined,
  principal: Principal,
  scope: Scope,
  verb: string,
  request: RbacRequest & { resource: string },
  req: Request,
): Promise<RecordVisibility> {
  const user = principal.kubernetes;
  if (!rbac || !user) throw lacksScope(principal, scope);
  // A cluster-scope reader (governance:read by a ClusterRoleBinding) reads every namespace's.
  const clusterWide = rbacAttributes(scope, verb);
  if (clusterWide && (await rbac.allows(user, clusterWide))) return SEES_EVERYTHING;
  const namespace = await request.namespace?.(req);
  const attributes: ResourceAttributes = {
    group: ARBITER_API_GROUP,
    resource: request.resource,
    verb,
    ...(namespace === undefined ? {} : { namespace }),
  };
  if (namespace !== undefined && (await rbac.allows(user, attributes)))
    return seesNamespaces(new Set([namespace]));
  throw new ArbiterError(
    'FORBIDDEN',
    `"${principal.name}" lacks the scope ${scope}, and RBAC does not let user "${user.username}" ${describeAccess(attributes)}`,
  );
}

/**
 * Bearer authentication and the per-key rate limit, no scope asked: for routes about the
 * caller itself (whoami). In cluster mode any Kubernetes user is a caller.
 */
export function requireCaller(
  authenticator: Authenticator,
  limiter: KeyRateLimiter,
  now: () => number,
): RequestHandler {
  return async (req, res, next) => {
    const setHeader: SetHeader = (name, value) => res.setHeader(name, value);
    const principal = await identifyCaller(
      authenticator.rbac ?? authenticator,
      req.get('authorization'),
      setHeader,
    );
    req.principal = principal;
    takeRateLimit(principal, limiter, now(), setHeader);
    next();
  };
}

/**
 * Bearer authentication, the scope check (or RBAC's answer) and the per-key rate limit,
 * in that order: an unknown caller learns nothing about scopes, and a rejected one costs
 * no tokens.
 */
export function requireScope(
  authenticator: Authenticator,
  limiter: KeyRateLimiter,
  scope: Scope,
  now: () => number,
  request: RbacRequest = {},
): RequestHandler {
  // Only where RBAC can grant the scope may a Kubernetes user unknown to Arbiter call.
  const rbac = RBAC_SCOPES[scope] || request.resource ? authenticator.rbac : undefined;
  return async (req, res, next) => {
    const setHeader: SetHeader = (name, value) => res.setHeader(name, value);
    const principal = await identifyCaller(rbac ?? authenticator, req.get('authorization'), setHeader);
    req.principal = principal;
    if (hasScope(principal, scope)) req.visibility = await permitByKey(principal, request, req);
    else {
      const verb = request.verb ?? readVerb(Object.keys(req.params).length > 0);
      const { resource } = request;
      req.visibility = resource
        ? await permitOnResource(rbac, principal, scope, verb, { ...request, resource }, req)
        : await permitByRbac(rbac, principal, scope, verb, request, req);
    }
    takeRateLimit(principal, limiter, now(), setHeader);
    next();
  };
}
