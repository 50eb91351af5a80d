import { rbacAttributes, type RbacAuthority } from './rbac-access.js';
import type { KubernetesUser, Principal, Scope } from './scopes.js';

/**
 * Which records a caller may read (issue #38): every record for a cluster-scope reader,
 * else only those of some namespaces. A record's namespace comes from recordNamespace
 * (model/record-namespace.ts); records of no namespace need cluster scope.
 */
export interface RecordVisibility {
  /** True for a cluster-scope reader: nothing to filter. */
  readonly all: boolean;
  /**
   * Whether records of `namespace` (undefined: of none) are visible. Rejects with
   * UNAVAILABLE when RBAC cannot answer: the caller must then show nothing.
   */
  sees(namespace: string | undefined): Promise<boolean>;
  /**
   * Set when the caller may see the records of this one namespace and no others (a key
   * limited to it), so that a list can ask the log for them instead of filtering all.
   */
  readonly onlyNamespace?: string;
}

export const SEES_EVERYTHING: RecordVisibility = { all: true, sees: () => Promise.resolve(true) };

/** A key limited to namespaces sees their records only. */
export function seesNamespaces(namespaces: ReadonlySet<string>): RecordVisibility {
  const [only] = namespaces;
  return {
    all: false,
    sees: (namespace) => Promise.resolve(namespace !== undefined && namespaces.has(namespace)),
    ...(namespaces.size === 1 ? { onlyNamespace: only } : {}),
  };
}

/**
 * A Kubernetes user without cluster-scope permission: RBAC is asked `verb` on the scope's
 * resource in the namespace a record belongs to (a RoleBinding there allows it). The
 * SubjectAccessAuthorizer caches its answers per user for seconds, so that a list asks
 * once per namespace and a live feed notices a RoleBinding removed.
 */
export function seesNamespacesRbacAllows(
  rbac: Pick<RbacAuthority, 'allows'>,
  user: KubernetesUser,
  scope: Scope,
  verb: string,
): RecordVisibility {
  return {
    all: false,
    sees(namespace) {
      const attributes =
        namespace === undefined ? undefined : rbacAttributes(scope, verb, undefined, namespace);
      return attributes ? rbac.allows(user, attributes) : Promise.resolve(false);
    },
  };
}

/** The caller's reach when it has the scope: all, or its key's namespaces. */
export function visibilityOf(principal: Principal): RecordVisibility {
  return principal.namespaces ? seesNamespaces(principal.namespaces) : SEES_EVERYTHING;
}

/**
 * Whether the principal may manage objects of `namespace`, or cluster objects when it is
 * undefined: a key limited to namespaces manages only theirs, never cluster objects. The
 * scope check stays the caller's (hasScope).
 */
export function mayManageNamespace(principal: Principal, namespace: string | undefined): boolean {
  if (principal.namespaces === undefined) return true;
  return namespace !== undefined && principal.namespaces.has(namespace);
}
