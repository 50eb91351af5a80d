import type { KubernetesUser, Principal, Scope } from './scopes.js';

/**
 * The API group of Arbiter's virtual resources. Nothing serves them: RBAC rules name them
 * and SubjectAccessReviews ask about them, as Kubernetes does for approving
 * CertificateSigningRequests (verb `approve` on `signers`).
 */
export const ARBITER_API_GROUP = 'governance.arbiter.dev';

/** What a SubjectAccessReview asks (spec.resourceAttributes). */
export interface ResourceAttributes {
  group: string;
  resource: string;
  verb: string;
  /** The object a rule's resourceNames may limit it to; absent when none is named. */
  name?: string;
  /**
   * Asked in this namespace (a RoleBinding there may allow it), else at cluster scope
   * (only a ClusterRoleBinding may).
   */
  namespace?: string;
}

/**
 * The scopes RBAC may grant a Kubernetes user, as verbs on virtual resources of
 * ARBITER_API_GROUP. Reads are `get` (a route naming one item, e.g. `/decisions/:id`) or
 * `list` (anything else); a review is `approve` or `deny` with the decision's capability
 * as resourceName. Every other scope (propose, the manage scopes, admin) comes only from
 * the keys file or an actor binding.
 */
export const RBAC_SCOPES: Readonly<Partial<Record<Scope, { resource: string; verbs: readonly string[] }>>> = {
  'governance:read': { resource: 'decisions', verbs: ['get', 'list'] },
  'governance:review': { resource: 'decisions', verbs: ['approve', 'deny'] },
  'audit:read': { resource: 'auditlog', verbs: ['get', 'list'] },
};

/** The verb of a read: `get` for a route naming one item, `list` for the rest. */
export function readVerb(namesOneItem: boolean): 'get' | 'list' {
  return namesOneItem ? 'get' : 'list';
}

/** What RBAC must allow for `scope` with this verb, or undefined when RBAC cannot grant it. */
export function rbacAttributes(
  scope: Scope,
  verb: string,
  name?: string,
  namespace?: string,
): ResourceAttributes | undefined {
  const rule = RBAC_SCOPES[scope];
  if (!rule?.verbs.includes(verb)) return undefined;
  return {
    group: ARBITER_API_GROUP,
    resource: rule.resource,
    verb,
    ...(name === undefined ? {} : { name }),
    ...(namespace === undefined ? {} : { namespace }),
  };
}

/**
 * Cluster mode: Kubernetes users whose rights RBAC decides. `authenticate` is the full
 * authentication (API keys first) that also accepts a user Arbiter knows nothing about,
 * as a principal without scopes; `allows` asks the API server (SubjectAccessReview) and
 * rejects with UNAVAILABLE when it cannot answer.
 */
export interface RbacAuthority {
  authenticate(credential: string): Promise<Principal | undefined>;
  allows(user: KubernetesUser, attributes: ResourceAttributes): Promise<boolean>;
}

/** `verb resource.group "name" in namespace N`, as a refusal names what was asked. */
export function describeAccess(attributes: ResourceAttributes): string {
  const named = attributes.name === undefined ? '' : ` "${attributes.name}"`;
  const where = attributes.namespace === undefined ? '' : ` in namespace ${attributes.namespace}`;
  return `${attributes.verb} ${attributes.resource}.${attributes.group}${named}${where}`;
}
