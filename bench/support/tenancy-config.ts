const API_VERSION = 'governance.arbiter.dev/v1alpha1';
const CAPABILITIES = [
  { name: 'tn.read', riskLevel: 'low' },
  { name: 'tn.write', riskLevel: 'medium' },
  { name: 'tn.delete', riskLevel: 'high' },
] as const;

type Manifest = Record<string, unknown>;

/**
 * A platform of `teams` teams, each with one agent granted the three tn.* capabilities
 * under the same cluster guardrails. `namespaced`: each team governs itself (a Delegation,
 * a NamespacedPolicy of three rules and a NamespacedActorGrant in namespace team-N, agent
 * `team-N/agent`); otherwise the platform grants cluster actors `agent-N` the same (no
 * tenancy object at all: the configuration of before tenancy).
 */
export function tenancyObjects(teams: number, namespaced: boolean): Manifest[] {
  const objects: Manifest[] = CAPABILITIES.map((c) => ({
    apiVersion: API_VERSION,
    kind: 'Capability',
    metadata: { name: c.name.replace('.', '-') },
    spec: {
      ...c,
      parameterSchema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
    },
  }));
  objects.push({
    apiVersion: API_VERSION,
    kind: 'Policy',
    metadata: { name: 'guardrails' },
    spec: {
      rules: [
        { capability: 'tn.delete', condition: 'parameters.amount > 100', outcome: 'ESCALATE', priority: 100 },
        { capability: 'tn.write', condition: 'parameters.amount > 5000', outcome: 'DENY', priority: 100 },
      ],
    },
  });
  const grants = CAPABILITIES.map((c) => ({ capability: c.name }));
  for (let i = 0; i < teams; i++) {
    if (!namespaced) {
      objects.push({
        apiVersion: API_VERSION,
        kind: 'ActorGrant',
        metadata: { name: `agent-${i}` },
        spec: { actor: { id: `agent-${i}`, type: 'ai-agent' }, grants },
      });
      continue;
    }
    const namespace = `team-${i}`;
    objects.push(
      {
        apiVersion: API_VERSION,
        kind: 'Delegation',
        metadata: { name: namespace },
        spec: {
          namespaces: [namespace],
          capabilities: ['tn.*'],
          maxRiskLevel: 'high',
          rateLimit: { maxRequests: 1_000_000_000, windowSeconds: 60 },
        },
      },
      {
        apiVersion: API_VERSION,
        kind: 'NamespacedPolicy',
        metadata: { name: 'rules', namespace },
        spec: {
          rules: [
            {
              capability: 'tn.read',
              condition: `parameters.amount > ${900 + i}`,
              outcome: 'REQUIRE_CONFIRMATION',
              priority: 10,
            },
            {
              capability: 'tn.write',
              condition: 'parameters.amount > 1000',
              outcome: 'ESCALATE',
              priority: 10,
            },
            { capability: 'tn.delete', outcome: 'ALLOW', priority: 1000 },
          ],
        },
      },
      {
        apiVersion: API_VERSION,
        kind: 'NamespacedActorGrant',
        metadata: { name: 'agent', namespace },
        spec: { actor: { id: 'agent', type: 'ai-agent' }, grants },
      },
    );
  }
  return objects;
}

/** Proposals spread over every team's agent and the three capabilities, every outcome represented. */
export function tenancyProposals(teams: number, namespaced: boolean, count: number): string[] {
  return Array.from({ length: count }, (_, k) => {
    const team = (k * 7919) % teams;
    return JSON.stringify({
      actor: { id: namespaced ? `team-${team}/agent` : `agent-${team}`, type: 'ai-agent' },
      action: { capability: CAPABILITIES[k % 3]!.name, parameters: { amount: (k * 37) % 8000 } },
    });
  });
}
