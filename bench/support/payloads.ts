import type { AuditEventInput } from '../../src/audit/audit-log.js';

/** dev-agent-key: stored hashed, bound to agent-001, the realistic caller of propose. */
export const AGENT_AUTH = { Authorization: 'Bearer dev-agent-key' };
export const ADMIN_AUTH = { Authorization: 'Bearer dev-admin-key' };

function proposal(capability: string, parameters: Record<string, unknown>, context = {}): string {
  return JSON.stringify({
    actor: { id: 'agent-001', type: 'ai-agent' },
    action: { capability, parameters },
    context,
  });
}

/**
 * Proposals against examples/manifests, every outcome represented: ALLOW, DENY by a
 * policy, REQUIRE_CONFIRMATION, ESCALATE by risk, and a rate-limited query.
 */
export const EXAMPLE_PROPOSALS: readonly string[] = [
  proposal(
    'payments.transfer',
    { amount: 250, currency: 'USD', to: 'acct-7' },
    { session_id: 's-1', metadata: { trace: 'abc123' } },
  ),
  proposal('database.query', {
    query: 'select id, name from customers where region = $1',
    database: 'staging',
  }),
  proposal('payments.transfer', { amount: 50_000, currency: 'USD', to: 'acct-9' }),
  proposal('database.write', {
    database: 'staging',
    statement: 'update orders set state = $1 where id = $2',
  }),
  proposal(
    'payments.transfer',
    { amount: 900, currency: 'EUR', to: 'acct-3' },
    { metadata: { ticket: 'OPS-1234' } },
  ),
  proposal('database.write', { database: 'production', statement: 'update t set x = 1' }),
  proposal('deploy.production', { service: 'web', version: '1.2.3' }),
  proposal('payments.transfer', { amount: 5_000, currency: 'EUR', to: 'acct-1' }),
];

/** An agent's query, asked of staging (allowed) and of production (denied) in the Cerbos comparison. */
const SAME_QUERY = 'select id, name from customers where region = $1';

/** The same question as a Cerbos CheckResources request: principal agent-001, role ai-agent. */
function checkResources(database: string): string {
  return JSON.stringify({
    requestId: `query-${database}`,
    principal: { id: 'agent-001', roles: ['ai-agent'], attr: {} },
    resources: [
      {
        actions: ['query'],
        resource: { kind: 'database', id: database, attr: { database, query: SAME_QUERY } },
      },
    ],
  });
}

export interface SameQuestion {
  allowed: string;
  denied: string;
}

/**
 * May agent-001 run this query? Asked of Arbiter (bench/fixtures/same-question/arbiter) and
 * of Cerbos (bench/fixtures/same-question/cerbos): allowed on staging, denied on production.
 */
export const SAME_QUESTION: { arbiter: SameQuestion; cerbos: SameQuestion } = {
  arbiter: {
    allowed: proposal('database.query', { query: SAME_QUERY, database: 'staging' }),
    denied: proposal('database.query', { query: SAME_QUERY, database: 'production' }),
  },
  cerbos: { allowed: checkResources('staging'), denied: checkResources('production') },
};

/** A decision's audit event shaped as the decision service writes it (about 1 KiB of JSON). */
export function decisionEvent(
  i: number,
  timestamp: string,
  actors = 1000,
  capabilities = 50,
): AuditEventInput {
  const actor = `agent-${i % actors}`;
  const capability = `cap-${i % capabilities}.run`;
  const outcome = i % 7 === 0 ? 'DENY' : i % 11 === 0 ? 'ESCALATE' : 'ALLOW';
  const decisionId = `d-${i.toString(16).padStart(8, '0')}-4a64-9a39-6f1f3f0e2a11`;
  return {
    event_type: 'governance.decision',
    timestamp,
    actor_id: actor,
    capability,
    outcome,
    risk_score: 0.35,
    decision_id: decisionId,
    policies_evaluated: ['payment-limits', 'prod-writes'],
    policy_matched: outcome === 'DENY' ? 'payment-limits' : null,
    data: {
      request: {
        actor: { id: actor, type: 'ai-agent' },
        action: { capability, parameters: { amount: i % 20_000, currency: 'USD', to: `acct-${i % 97}` } },
        context: { session: `s-${i % 13}` },
      },
      principal: 'agent-001',
      evaluation: {
        grant: { capability, constraints: {} },
        rules: [
          { policy: 'payment-limits', index: 0, outcome: 'DENY', priority: 200, matched: outcome === 'DENY' },
          {
            policy: 'payment-limits',
            index: 1,
            outcome: 'REQUIRE_CONFIRMATION',
            priority: 100,
            matched: false,
          },
        ],
        risk: { base: 0.3, actor_type: 0.05, score: 0.35 },
      },
      reason: outcome === 'DENY' ? 'policy payment-limits denies: parameters.amount > 10000' : 'granted',
    },
  };
}
