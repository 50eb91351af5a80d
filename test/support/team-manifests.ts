/**
 * Team manifests to put beside the example ones (tests of embedded mode and the CLI): a
 * Delegation of email.* for team-a only, team-a's bot granted email.send and (outside the
 * Delegation) deploy.production, team-b's bot with no Delegation, and a policy `mail` in both
 * namespaces (ESCALATE of held mail in team-a, DENY in team-b).
 */
export const TEAM_MANIFESTS = `
apiVersion: governance.arbiter.dev/v1alpha1
kind: Delegation
metadata: {name: team-a}
spec: {namespaces: [team-a], capabilities: ["email.*"], maxRiskLevel: medium}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: bot, namespace: team-a}
spec:
  actor: {id: bot, type: ai-agent}
  grants: [{capability: email.send}, {capability: deploy.production}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: mail, namespace: team-a}
spec:
  rules: [{capability: email.send, condition: "parameters.subject == 'hold'", outcome: ESCALATE}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: bot, namespace: team-b}
spec:
  actor: {id: bot, type: ai-agent}
  grants: [{capability: email.send}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: mail, namespace: team-b}
spec:
  rules: [{capability: email.send, outcome: DENY}]
`;
