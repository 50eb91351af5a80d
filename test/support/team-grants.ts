/**
 * A manifests file of cluster ActorGrants, one per actor, of one capability. Cluster
 * ActorGrants may grant namespaced actors (`team-a/bot`), whose records belong to the
 * namespace: records of namespaced actors without the tenancy kinds.
 */
export function teamGrantsYaml(actorIds: readonly string[], capability: string, type = 'automation'): string {
  return actorIds
    .map(
      (id, n) => `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: team-grant-${n}}
spec:
  actor: {id: ${id}, type: ${type}}
  grants:
    - capability: ${capability}
`,
    )
    .join('---\n');
}
