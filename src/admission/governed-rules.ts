import type { Operation, RuleWithOperations } from './validating-webhook-configuration.js';

/** One group-version's resources, as `/api/v1` and `/apis/<group>/<version>` list them. */
export interface ApiResourceList {
  /** `v1` for the core group, else `<group>/<version>`. */
  groupVersion: string;
  resources: readonly { name: string; namespaced?: boolean; verbs?: readonly string[] }[];
}

export const GOVERNED_OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** A resource reaches a validating webhook only through one of these verbs (connect is create). */
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Why a resource is never governed: the cluster itself depends on these writes, so a slow
 * or absent Arbiter must never stand in their way (or, with Fail, deadlock the cluster).
 * Each check gets the group and the resource split into base and subresource.
 */
const NEVER_GOVERNED: readonly {
  why: string;
  matches: (group: string, base: string, sub: string) => boolean;
}[] = [
  {
    why: 'webhook configurations: Arbiter must never stand between an admin and removing it',
    matches: (group) => group === 'admissionregistration.k8s.io',
  },
  {
    why: 'leases: leader election and node heartbeats',
    matches: (group, base) => group === 'coordination.k8s.io' && base === 'leases',
  },
  {
    why: 'events: written by every component, all the time',
    matches: (group, base) => (group === '' || group === 'events.k8s.io') && base === 'events',
  },
  {
    why: 'TokenReviews, SubjectAccessReviews and other reviews: authentication and authorization',
    matches: (group, base) => group.endsWith('.k8s.io') && base.endsWith('reviews'),
  },
  {
    why: 'nodes and their subresources: kubelets',
    matches: (group, base) => group === '' && base === 'nodes',
  },
  {
    why: 'status subresources: controllers reporting what they observe',
    matches: (_group, _base, sub) => sub === 'status',
  },
];

/** The reason a resource is never governed, or undefined when it may be. */
export function neverGovernedBecause(group: string, resource: string): string | undefined {
  // Stryker disable next-line StringLiteral: split yields a base always; a sub is only compared to 'status'
  const [base = '', sub = ''] = resource.split('/', 2);
  return NEVER_GOVERNED.find((rule) => rule.matches(group, base, sub))?.why;
}

/**
 * The governance webhook's rules from API discovery: webhook rules cannot exclude, so
 * every governed resource and subresource is listed by name, one rule per API group (all
 * versions; with matchPolicy Equivalent a request through another version still matches).
 * Read-only resources and the ones in NEVER_GOVERNED are left out. Sorted by UTF-16 code
 * units (sort()'s default, independent of locale), so the same discovery always yields the
 * same rules and reconciling compares equal.
 */
export function governedRules(discovery: readonly ApiResourceList[]): RuleWithOperations[] {
  const byGroup = new Map<string, Set<string>>();
  for (const list of discovery) {
    const group = groupOf(list.groupVersion);
    for (const resource of list.resources) {
      if (!isWritable(resource.verbs) || neverGovernedBecause(group, resource.name)) continue;
      const resources = byGroup.get(group) ?? new Set<string>();
      resources.add(resource.name);
      byGroup.set(group, resources);
    }
  }
  return [...byGroup.keys()].sort().map((group) => ({
    apiGroups: [group],
    apiVersions: ['*'],
    operations: [...GOVERNED_OPERATIONS],
    // Stryker disable next-line ArrayDeclaration: group is one of byGroup's keys, so the fallback is never used
    resources: [...(byGroup.get(group) ?? [])].sort(),
    scope: '*',
  }));
}

/** `v1` is the core group (''); `apps/v1` is `apps`. */
function groupOf(groupVersion: string): string {
  const slash = groupVersion.indexOf('/');
  // Stryker disable next-line EqualityOperator: a slash at 0 slices to '' as well
  return slash < 0 ? '' : groupVersion.slice(0, slash);
}

function isWritable(verbs: readonly string[] | undefined): boolean {
  // Stryker disable next-line ArrayDeclaration: the fallback's entry is no write verb either
  return (verbs ?? []).some((verb) => WRITE_VERBS.has(verb));
}
