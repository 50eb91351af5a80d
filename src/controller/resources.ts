import { API_GROUP, kindKey, type Kind } from '../model/index.js';

/** Where each kind lives in the Kubernetes API (must match crds/). */
export const API_GROUP_VERSION = 'v1alpha1';

export const PLURALS: Record<Kind, string> = {
  Capability: 'capabilities',
  Policy: 'policies',
  ActorGrant: 'actorgrants',
  Delegation: 'delegations',
  NamespacedPolicy: 'namespacedpolicies',
  NamespacedActorGrant: 'namespacedactorgrants',
};

/**
 * The collection path informers list and watch, e.g. /apis/governance.arbiter.dev/v1alpha1/policies;
 * for a namespaced kind, the objects of every namespace.
 */
export function collectionPath(kind: Kind): string {
  return `/apis/${API_GROUP}/${API_GROUP_VERSION}/${PLURALS[kind]}`;
}

/** A custom object as the API server returns it: the informer keeps these untouched. */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    /** Set on the namespaced kinds. */
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: unknown;
  status?: Record<string, unknown>;
}

/** The objectKey of a raw object of `kind` (Kind/ns/name for the namespaced kinds). */
export function rawKey(kind: Kind, raw: RawObject): string {
  return kindKey(kind, raw.metadata?.name ?? '', raw.metadata?.namespace);
}
