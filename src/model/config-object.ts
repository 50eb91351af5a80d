import type { ActorType, EnforcementAction, Outcome, RiskLevel, SubjectKind } from './vocabulary.js';

/**
 * The three configuration kinds, in the form the CRDs hold (camelCase spec fields).
 * Manifests, API writes and Kubernetes informers all produce these objects; the index
 * is built from them.
 */
export const API_GROUP = 'governance.arbiter.dev';
export const API_VERSION = `${API_GROUP}/v1alpha1`;
export const KINDS = ['Capability', 'Policy', 'ActorGrant'] as const;
export type Kind = (typeof KINDS)[number];

export interface ObjectMeta {
  name: string;
  /** Set on the namespaced kinds only (TENANCY_KINDS). */
  namespace?: string;
  /** Kubernetes uid; embedded sources derive a stable one from kind and name. */
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface CapabilitySpec {
  name: string;
  description?: string;
  riskLevel: RiskLevel;
  parameterSchema?: Record<string, unknown>;
  /** The MCP tool it stands for, pinned to the digest of its reviewed definition. */
  mcp?: McpToolPin;
}

export interface McpToolPin {
  server: string;
  tool: string;
  /** toolDefinitionDigest (src/mcp/tool-definition-digest.ts) of the reviewed definition. */
  definitionDigest: string;
}

export interface PolicyRuleSpec {
  capability: string;
  /** CEL expression; absent means the rule always matches. */
  condition?: string;
  outcome: Outcome;
  priority?: number;
  /** How long a decision this rule escalates waits for review (else the server's default). */
  reviewTtlSeconds?: number;
}

export interface PolicySpec {
  description?: string;
  enabled?: boolean;
  /** Default enforce. */
  enforcementAction?: EnforcementAction;
  rules: PolicyRuleSpec[];
}

export interface TimeWindow {
  /** HH:MM, 24-hour clock. */
  start: string;
  end: string;
  /** IANA time zone name, e.g. Europe/Berlin. */
  timezone: string;
}

export interface RateLimit {
  maxRequests: number;
  windowSeconds: number;
}

export interface GrantConstraints {
  timeWindow?: TimeWindow;
  rateLimit?: RateLimit;
}

export interface GrantSpec {
  capability: string;
  constraints?: GrantConstraints;
}

/** RBAC's subject shape; a ServiceAccount has a namespace, a User has none. */
export interface ActorSubject {
  kind: SubjectKind;
  name: string;
  namespace?: string;
}

export interface ActorGrantSpec {
  actor: { id: string; type?: ActorType; subjects?: ActorSubject[] };
  grants: GrantSpec[];
}

/**
 * What a namespace may govern itself (cluster-scoped). A namespace's NamespacedActorGrants
 * authorize only capabilities it covers, up to its maxRiskLevel.
 */
export interface DelegationSpec {
  /** Namespace names, never a selector. */
  namespaces: string[];
  /** Capability names, or trailing-".*" patterns (`db.*` covers every `db.` name). */
  capabilities: string[];
  maxRiskLevel: RiskLevel;
  /** One budget per listed namespace, shared by all its actors. */
  rateLimit?: RateLimit;
  /** Namespace reviewers may settle escalations up to this risk level. */
  reviewers?: { maxRiskLevel: RiskLevel };
}

/**
 * The kinds of tenancy (issue #38). Not yet in KINDS: sources, controller, CRDs and the
 * index learn them one step at a time, and until then no source produces them.
 */
export const TENANCY_KINDS = ['Delegation', 'NamespacedPolicy', 'NamespacedActorGrant'] as const;
export type TenancyKind = (typeof TENANCY_KINDS)[number];

interface ObjectOf<K extends Kind | TenancyKind, S> {
  apiVersion: typeof API_VERSION;
  kind: K;
  metadata: ObjectMeta;
  spec: S;
}

export type CapabilityObject = ObjectOf<'Capability', CapabilitySpec>;
export type PolicyObject = ObjectOf<'Policy', PolicySpec>;
export type ActorGrantObject = ObjectOf<'ActorGrant', ActorGrantSpec>;
export type ConfigObject = CapabilityObject | PolicyObject | ActorGrantObject;
export type DelegationObject = ObjectOf<'Delegation', DelegationSpec>;
/** The same spec as Policy; its rules apply only to actors of its namespace. */
export type NamespacedPolicyObject = ObjectOf<'NamespacedPolicy', PolicySpec> & {
  metadata: ObjectMeta & { namespace: string };
};
/** The same spec as ActorGrant; in namespace N, spec.actor.id `bot` defines the actor `N/bot`. */
export type NamespacedActorGrantObject = ObjectOf<'NamespacedActorGrant', ActorGrantSpec> & {
  metadata: ObjectMeta & { namespace: string };
};
export type TenancyObject = DelegationObject | NamespacedPolicyObject | NamespacedActorGrantObject;

/** `Kind/name`: the identity of an object within one source. */
export function objectKey(object: Pick<ConfigObject, 'kind' | 'metadata'>): string {
  return `${object.kind}/${object.metadata.name}`;
}
