import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';
import { readStreamUntil } from '../support/read-event-stream.js';

const arbiter = useArbiter();

describe('GET /api/v1/audit/events as server-sent events', () => {
  it('streams new entries live, filtered by event_type', async () => {
    const controller = new AbortController();
    const response = await fetch(`${arbiter.url}/api/v1/audit/events?event_type=governance.decision`, {
      headers: { authorization: `Bearer ${KEYS.auditor}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const propose = (query: string) =>
      call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: { capability: 'database.query', parameters: { query } },
        },
      });
    const decision = await propose('q');
    const registered = await call(arbiter.url, 'POST', '/api/v1/capabilities', {
      key: KEYS.admin,
      body: { name: 'sse.check', risk_level: 'low' },
    });
    expect(registered.status).toBe(201);
    // Entries stream in chain order: once a decision made after the registration has
    // arrived, the registration would have arrived before it, had the filter let it through.
    const sentinel = await propose('after the registration');
    const received = await readStreamUntil(response, controller, (text) =>
      text.includes(sentinel.body.decision_id),
    );
    expect(received).toContain('event: governance.decision');
    expect(received).toContain(decision.body.audit_ref);
    expect(received).toContain(sentinel.body.audit_ref);
    expect(received).not.toContain('capability.registered');
    expect(received).not.toContain('sse.check');
  });

  it('requires audit:read', async () => {
    const res = await fetch(`${arbiter.url}/api/v1/audit/events`, {
      headers: { authorization: `Bearer ${KEYS.agent}`, accept: 'text/event-stream' },
    });
    expect(res.status).toBe(403);
  });
});
