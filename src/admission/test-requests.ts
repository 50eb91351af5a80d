import { PLURALS } from '../controller/resources.js';
import type { Kind } from '../model/index.js';
import type { AdmissionRequest } from './admission-review.js';

/** AdmissionRequest builders for admission tests; not part of the public surface. */

export const PLANNER = 'system:serviceaccount:agents:planner';

export function configMapRequest(overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'a1b2c3',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    name: 'settings',
    namespace: 'agents-sandbox',
    operation: 'CREATE',
    userInfo: { username: PLANNER, groups: ['system:serviceaccounts'] },
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'settings',
        namespace: 'agents-sandbox',
        uid: 'u-1',
        resourceVersion: '17',
        creationTimestamp: '2026-11-23T10:00:00Z',
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
        labels: { app: 'x' },
      },
      data: { mode: 'fast' },
    },
    oldObject: null,
    dryRun: false,
    ...overrides,
  };
}

/** The Kubernetes-shaped write of a configuration object the configuration webhook sees. */
export function configurationRequest(
  object: Record<string, unknown>,
  overrides: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  const kind = String(object.kind);
  const metadata = object.metadata as { name?: string; namespace?: string } | undefined;
  return {
    uid: 'cfg-1',
    kind: { group: 'governance.arbiter.dev', version: 'v1alpha1', kind },
    resource: {
      group: 'governance.arbiter.dev',
      version: 'v1alpha1',
      resource: PLURALS[kind as Kind] ?? kind,
    },
    name: String(metadata?.name ?? ''),
    ...(metadata?.namespace === undefined ? {} : { namespace: metadata.namespace }),
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object,
    ...overrides,
  };
}
