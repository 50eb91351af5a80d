import type {
  ActorType,
  CapabilitySpec,
  DelegationSpec,
  EnforcementAction,
  GrantConstraints,
  Kind,
  ObjectStatus,
  Outcome,
  PolicySpec,
} from '../model/index.js';
import type { SensitiveFields } from './sensitive-fields.js';
import type { CompiledCondition } from './compile-condition.js';
import type { ParameterValidator } from './compile-parameter-schema.js';

/** A registered capability with its parameter schema compiled. */
export interface IndexedCapability {
  /** metadata.name: the id of listings. */
  readonly id: string;
  /** spec.name: the dotted name proposals use. */
  readonly name: string;
  readonly spec: CapabilitySpec;
  /** metadata.creationTimestamp (ISO 8601), when the source knows it. */
  readonly createdAt: string | undefined;
  readonly validateParameters: ParameterValidator;
  /** Where the parameter schema marks values sensitive; undefined when nowhere. */
  readonly sensitive: SensitiveFields | undefined;
}

/** One rule of an enabled policy, its condition compiled (null: always matches). */
export interface CompiledRule {
  readonly policy: string;
  readonly ruleIndex: number;
  readonly capability: string;
  readonly priority: number;
  readonly outcome: Outcome;
  /** How long a decision this rule escalates waits for review; undefined: the default. */
  readonly reviewTtlSeconds: number | undefined;
  readonly condition: CompiledCondition | null;
  /** The policy's enforcementAction: only enforce rules decide. */
  readonly enforcement: EnforcementAction;
}

export interface IndexedPolicy {
  readonly name: string;
  readonly spec: PolicySpec;
  readonly enabled: boolean;
  readonly createdAt: string | undefined;
  readonly status: ObjectStatus;
}

/** One entry of an ActorGrant's spec.grants, with where it came from. */
export interface IndexedGrant {
  readonly actorId: string;
  /** When the ActorGrant names a type, the grant applies only to proposals of that type. */
  readonly actorType: ActorType | undefined;
  readonly capability: string;
  readonly constraints: GrantConstraints;
  /** Name of the ActorGrant object (`namespace/name` of a NamespacedActorGrant) and the position in its spec.grants. */
  readonly source: string;
  readonly grantIndex: number;
}

/** A Delegation: what the namespaces it lists may govern themselves. */
export interface IndexedDelegation {
  readonly name: string;
  readonly spec: DelegationSpec;
}

export interface StatusEntry {
  readonly kind: Kind;
  readonly name: string;
  /** Set for the namespaced kinds. */
  readonly namespace?: string;
  readonly status: ObjectStatus;
}

export interface IndexCounts {
  readonly capabilities: number;
  readonly policies: number;
  readonly enabledPolicies: number;
  readonly rules: number;
  readonly actorGrantObjects: number;
  readonly grants: number;
  readonly actors: number;
  /** Kubernetes identities bound to actors (ActorGrant spec.actor.subjects). */
  readonly boundIdentities: number;
  readonly notReady: number;
  /** The tenancy kinds (issue #38): Delegation objects, and the namespaces they delegate. */
  readonly delegations: number;
  readonly delegatedNamespaces: number;
  readonly namespacedPolicies: number;
  /** Rules of enabled, valid NamespacedPolicies, over all namespaces. */
  readonly namespacedRules: number;
  readonly namespacedActorGrantObjects: number;
  readonly namespacedGrants: number;
  readonly namespacedActors: number;
}
