import type { ActorType, EnforcementAction, Outcome, RiskLevel, SubjectKind } from './vocabulary.js';

/**
 * The configuration kinds, in the form the CRDs hold (camelCase spec fields).
 * Manifests, API writes and Kubernetes informers all produce these objects; the index
 * is built from them.
 */
export const API_GROUP = 'governance.arbiter.dev';
export const API_VERSION = `${API_GROUP}/v1alpha1`;
/** The kinds of tenancy (issue #38): what a namespace may govern, and what it governs. */
export const TENANCY_KINDS = ['Delegation', 'NamespacedPolicy', 'NamespacedActorGrant'] as const;
export type TenancyKind = (typeof TENANCY_KINDS)[number];
export const KINDS = ['Capability', 'Policy', 'ActorGrant', ...TENANCY_KINDS] as const;
export type Kind = (typeof KINDS)[number];
/** The kinds whose objects live in a namespace (metadata.namespace); the others are cluster-scoped. */
export const NAMESPACED_KINDS = ['NamespacedPolicy', 'NamespacedActorGrant'] as const;
export type NamespacedKind = (typeof NAMESPACED_KINDS)[number];

export function isNamespacedKind(kind: Kind): kind is NamespacedKind {
  return (NAMESPACED_KINDS as readonly string[]).includes(kind);
}

export interface ObjectMeta {
  name: string;
  /** Set on the namespaced kinds only (NAMESPACED_KINDS). */
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

interface ObjectOf<K extends Kind, S> {
  apiVersion: typeof API_VERSION;
  kind: K;
  metadata: ObjectMeta;
  spec: S;
}

export type CapabilityObject = ObjectOf<'Capability', CapabilitySpec>;
export type PolicyObject = ObjectOf<'Policy', PolicySpec>;
export type ActorGrantObject = ObjectOf<'ActorGrant', ActorGrantSpec>;
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
export type ConfigObject = CapabilityObject | PolicyObject | ActorGrantObject | TenancyObject;

/**
 * `Kind/name`, or `Kind/namespace/name` for the namespaced kinds: the identity of an object
 * within one source (one name in two namespaces is two objects).
 */
export function objectKey(object: Pick<ConfigObject, 'kind' | 'metadata'>): string {
  return kindKey(object.kind, object.metadata.name, object.metadata.namespace);
}

/** objectKey from its parts; `namespace` counts only for the namespaced kinds. */
export function kindKey(kind: Kind, name: string, namespace?: string): string {
  return isNamespacedKind(kind) ? `${kind}/${namespace ?? ''}/${name}` : `${kind}/${name}`;
}

/** `namespace/name` for a namespaced object, else its name: how trails and sources name it. */
export function qualifiedName(object: Pick<ConfigObject, 'metadata'>): string {
  const { name, namespace } = object.metadata;
  return namespace === undefined ? name : `${namespace}/${name}`;
}
