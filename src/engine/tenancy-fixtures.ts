import {
  API_VERSION,
  type ActorSubject,
  type DelegationObject,
  type DelegationSpec,
  type NamespacedActorGrantObject,
  type NamespacedPolicyObject,
  type PolicyRuleSpec,
} from '../model/index.js';

/** Tenancy objects for tests: a Delegation, a NamespacedPolicy, a NamespacedActorGrant. */

export function delegation(
  name: string,
  spec: Partial<DelegationSpec>,
  creationTimestamp?: string,
): DelegationObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Delegation',
    metadata: { name, ...(creationTimestamp ? { creationTimestamp } : {}) },
    spec: { namespaces: [name], capabilities: ['db.*'], maxRiskLevel: 'high', ...spec },
  };
}

export function nsPolicy(namespace: string, name: string, rules: PolicyRuleSpec[]): NamespacedPolicyObject {
  return {
    apiVersion: API_VERSION,
    kind: 'NamespacedPolicy',
    metadata: { name, namespace },
    spec: { rules },
  };
}

export function nsGrant(
  namespace: string,
  name: string,
  localId: string,
  capabilities: string[],
  subjects?: ActorSubject[],
): NamespacedActorGrantObject {
  return {
    apiVersion: API_VERSION,
    kind: 'NamespacedActorGrant',
    metadata: { name, namespace },
    spec: {
      actor: { id: localId, ...(subjects ? { subjects } : {}) },
      grants: capabilities.map((c) => ({ capability: c })),
    },
  };
}
