import type { Scope } from '../../src/auth/index.js';

/** Every authenticated endpoint of the API (README, "The API"), with its scope and a plausible body. */
export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** `{decision}` is replaced by a real decision id. */
  path: string;
  scope: Scope;
  body?: unknown;
}

export const PROPOSAL = {
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability: 'payments.transfer', parameters: { amount: 250, currency: 'USD', to: 'acct-7' } },
};

export const ENDPOINTS: readonly Endpoint[] = [
  { method: 'POST', path: '/api/v1/governance/propose', scope: 'governance:propose', body: PROPOSAL },
  { method: 'GET', path: '/api/v1/governance/decisions', scope: 'governance:read' },
  { method: 'GET', path: '/api/v1/governance/decisions/{decision}', scope: 'governance:read' },
  {
    method: 'POST',
    path: '/api/v1/governance/decisions/{decision}/approve',
    scope: 'governance:review',
    body: { comment: 'ok' },
  },
  {
    method: 'POST',
    path: '/api/v1/governance/decisions/{decision}/deny',
    scope: 'governance:review',
    body: { comment: 'no' },
  },
  {
    method: 'POST',
    path: '/api/v1/governance/decisions/{decision}/execution',
    scope: 'governance:propose',
    body: { status: 'completed' },
  },
  { method: 'GET', path: '/api/v1/capabilities', scope: 'governance:read' },
  {
    method: 'POST',
    path: '/api/v1/capabilities',
    scope: 'capabilities:manage',
    body: { name: 'fuzz.cap', description: 'x', risk_level: 'low' },
  },
  { method: 'GET', path: '/api/v1/policies', scope: 'governance:read' },
  { method: 'GET', path: '/api/v1/policies/prod-writes', scope: 'governance:read' },
  {
    method: 'POST',
    path: '/api/v1/policies',
    scope: 'policies:manage',
    body: { name: 'fuzz-policy', rules: [] },
  },
  { method: 'PUT', path: '/api/v1/policies/fuzz-policy', scope: 'policies:manage', body: { rules: [] } },
  { method: 'GET', path: '/api/v1/actors/agent-001/grants', scope: 'governance:read' },
  {
    method: 'POST',
    path: '/api/v1/actors/agent-9/grants',
    scope: 'grants:manage',
    body: { capability: 'database.query' },
  },
  { method: 'DELETE', path: '/api/v1/actors/agent-001/grants/database.query', scope: 'grants:manage' },
  { method: 'GET', path: '/api/v1/audit/events', scope: 'audit:read' },
  { method: 'GET', path: '/api/v1/audit/log', scope: 'audit:read' },
  { method: 'GET', path: '/api/v1/audit/log/{decision}', scope: 'audit:read' },
  { method: 'GET', path: '/api/v1/audit/export', scope: 'audit:read' },
  { method: 'GET', path: '/api/v1/audit/verify', scope: 'audit:read' },
];
