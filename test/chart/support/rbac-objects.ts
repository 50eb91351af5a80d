import type { KubeObject } from './render-chart.js';

export const RBAC_API = '/apis/rbac.authorization.k8s.io/v1';

/** Where the API server takes each kind of object these tests create. */
export const OBJECT_PATHS: Record<string, (o: KubeObject) => string> = {
  ServiceAccount: (o) => `/api/v1/namespaces/${o.metadata.namespace}/serviceaccounts`,
  ClusterRole: () => `${RBAC_API}/clusterroles`,
  ClusterRoleBinding: () => `${RBAC_API}/clusterrolebindings`,
  Role: (o) => `${RBAC_API}/namespaces/${o.metadata.namespace}/roles`,
  RoleBinding: (o) => `${RBAC_API}/namespaces/${o.metadata.namespace}/rolebindings`,
};

/** A cluster-scoped object of Arbiter's API group. */
export function governanceObject(kind: string, name: string, spec: unknown) {
  return { apiVersion: 'governance.arbiter.dev/v1alpha1', kind, metadata: { name }, spec };
}

/** A Capability of low risk, named after the capability (`deploy.production` -> deploy-production). */
export function lowRiskCapability(name: string) {
  return governanceObject('Capability', name.replace('.', '-'), { name, riskLevel: 'low' });
}

/** A RoleBinding of one of the chart's ClusterRoles to a static user, in one namespace. */
export function roleBinding(namespace: string, role: string, user: string) {
  return {
    metadata: { name: `${user}-${role}`, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
  };
}
