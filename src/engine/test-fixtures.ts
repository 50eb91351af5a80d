import { buildIndex, type CompiledRule, type IndexedGrant, type IndexSnapshot } from '../index/index.js';
import type { RateLimitAdmissions } from './rate-limiter.js';
import {
  API_VERSION,
  namespacedActorId,
  type DelegationSpec,
  type ActorGrantObject,
  type ActorType,
  type CapabilityObject,
  type CapabilitySpec,
  type ConfigObject,
  type GrantConstraints,
  type PolicyObject,
  type PolicyRuleSpec,
  type Proposal,
} from '../model/index.js';

/** Builders for engine and index tests; not part of the public surface. */

export function capability(
  name: string,
  spec: Partial<CapabilitySpec> = {},
  creationTimestamp = '2024-01-01T00:00:00Z',
): CapabilityObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Capability',
    metadata: { name: name.replace(/[._]/g, '-'), creationTimestamp },
    spec: { name, riskLevel: 'low', ...spec },
  };
}

export function policy(name: string, rules: PolicyRuleSpec[], enabled = true): PolicyObject {
  return { apiVersion: API_VERSION, kind: 'Policy', metadata: { name }, spec: { enabled, rules } };
}

export function grant(
  name: string,
  actorId: string,
  grants: Array<{ capability: string; constraints?: GrantConstraints }>,
  actorType?: ActorType,
): ActorGrantObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ActorGrant',
    metadata: { name },
    spec: { actor: { id: actorId, ...(actorType ? { type: actorType } : {}) }, grants },
  };
}

export function proposal(
  capabilityName: string,
  parameters: Record<string, unknown> = {},
  actor: { id?: string; type?: ActorType } = {},
  context?: Proposal['context'],
): Proposal {
  return {
    actor: { id: actor.id ?? 'agent-1', type: actor.type ?? 'automation' },
    action: { capability: capabilityName, parameters },
    ...(context ? { context } : {}),
  };
}

/** A world with one low-risk capability granted to agent-1 plus the given extra objects. */
export function world(...extra: ConfigObject[]): IndexSnapshot {
  return buildIndex([
    capability('files.read', {
      parameterSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, amount: { type: 'number' } },
        additionalProperties: true,
      },
    }),
    grant('agent-1-files', 'agent-1', [{ capability: 'files.read' }]),
    ...extra,
  ]);
}

/** A rate limiter's refusal by the first limit asked. */
export const REFUSED: RateLimitAdmissions = { admitted: false, remaining: [0], refusedBy: 0 };

export const NOON_UTC = new Date('2024-06-12T12:00:00Z'); // a Wednesday

/** Tenancy objects for tenantWorld: by namespace, cluster-kind objects standing for namespaced ones. */
export interface TenantObjects {
  delegations?: Array<{ name: string; spec: DelegationSpec }>;
  /** NamespacedPolicies by namespace (written as Policy objects). */
  policies?: Record<string, PolicyObject[]>;
  /** NamespacedActorGrants by namespace (written as ActorGrant objects with local actor ids). */
  grants?: Record<string, ActorGrantObject[]>;
}

/**
 * The cluster objects' snapshot with tenancy slices, compiled by the index from the same
 * objects as cluster kinds and renamed as namespaced ones are (`namespace/name`), until
 * buildIndex builds the slices itself.
 */
export function tenantWorld(cluster: ConfigObject[], tenant: TenantObjects): IndexSnapshot {
  const snapshot = buildIndex(cluster);
  const capabilities = cluster.filter((o) => o.kind === 'Capability');
  const delegations = new Map(
    (tenant.delegations ?? []).flatMap((d) => d.spec.namespaces.map((ns) => [ns, d] as const)),
  );
  const namespaceRules = new Map<string, Map<string, readonly CompiledRule[]>>();
  for (const [ns, policies] of Object.entries(tenant.policies ?? {})) {
    const compiled = buildIndex([...capabilities, ...policies]);
    const byCapability = new Map<string, readonly CompiledRule[]>();
    for (const { name } of compiled.capabilities())
      byCapability.set(
        name,
        compiled.rulesFor(name).map((r) => ({ ...r, policy: `${ns}/${r.policy}` })),
      );
    namespaceRules.set(ns, byCapability);
  }
  const namespacedGrantsByActor = new Map<string, readonly IndexedGrant[]>();
  for (const [ns, grants] of Object.entries(tenant.grants ?? {})) {
    const compiled = buildIndex([...capabilities, ...grants]);
    for (const localId of compiled.actors()) {
      const actorId = namespacedActorId(ns, localId);
      namespacedGrantsByActor.set(
        actorId,
        compiled.grantsOfActor(localId).map((g) => ({ ...g, actorId, source: `${ns}/${g.source}` })),
      );
    }
  }
  return snapshot.withTenancy({ delegations, namespaceRules, namespacedGrantsByActor });
}
