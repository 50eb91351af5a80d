import { describe, expect, it } from 'vitest';
import { call, KEYS, removeDir, startArbiter, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter();
const propose = (body: unknown, key: string = KEYS.agent) =>
  call(arbiter.url, 'POST', '/api/v1/governance/propose', { key, body });
const proposal = (
  capability: string,
  parameters: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability, parameters },
  ...extra,
});

describe('propose: every outcome is a 200 with the decision', () => {
  it('ALLOW: a granted low-risk capability', async () => {
    const res = await propose(proposal('database.query', { query: 'select 1' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'ALLOW', constraints: expect.any(Object) });
    expect(res.body.decision_id).toEqual(expect.any(String));
    expect(res.body.audit_ref).toEqual(expect.any(String));
    expect(res.body.risk_score).toBeCloseTo(0.2, 5);
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('REQUIRE_CONFIRMATION: a policy rule on production writes', async () => {
    const res = await propose(
      proposal('database.write', { database: 'production', statement: 'update t set x=1' }),
    );
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('REQUIRE_CONFIRMATION');
  });

  it('ALLOW when the rule condition does not match', async () => {
    const res = await propose(
      proposal('database.write', { database: 'staging', statement: 'update t set x=1' }),
    );
    expect(res.body.outcome).toBe('ALLOW');
  });

  it('ESCALATE: risk above the threshold overrides ALLOW', async () => {
    const res = await propose(proposal('deploy.production', { service: 'web', version: '1.2.3' }));
    expect(res.body.outcome).toBe('ESCALATE');
    expect(res.body.risk_score).toBeGreaterThan(0.8);
  });

  it('DENY: a policy rule with a numeric condition', async () => {
    const res = await propose(
      proposal('payments.transfer', { amount: 50000, currency: 'USD', to: 'acct-1' }),
    );
    expect(res.body.outcome).toBe('DENY');
  });

  it('priority: the higher-priority DENY beats the REQUIRE_CONFIRMATION that also matches', async () => {
    const res = await propose(
      proposal('payments.transfer', { amount: 20000, currency: 'EUR', to: 'acct-1' }),
    );
    expect(res.body.outcome).toBe('DENY');
    const medium = await propose(
      proposal('payments.transfer', { amount: 5000, currency: 'EUR', to: 'acct-1' }),
    );
    expect(medium.body.outcome).toBe('REQUIRE_CONFIRMATION');
  });

  it('DENY: no grant for that actor', async () => {
    const res = await propose(
      {
        actor: { id: 'agent-999', type: 'ai-agent' },
        action: { capability: 'database.query', parameters: { query: 'x' } },
      },
      KEYS.admin,
    );
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('DENY');
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${res.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.body.evaluation.authority_check).toBe('no_grant');
  });

  it('DENY: capability not registered, and parameters that fail the schema', async () => {
    const unknown = await propose(proposal('database.drop', { table: 't' }));
    expect(unknown.body.outcome).toBe('DENY');
    const bad = await propose(proposal('database.query', { query: 42 }));
    expect(bad.body.outcome).toBe('DENY');
    expect(bad.body.reason).toMatch(/query/);
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${bad.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.body.evaluation.capability_check).toBe('invalid_parameters');
    const trail2 = await call(arbiter.url, 'GET', `/api/v1/audit/log/${unknown.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail2.body.evaluation.capability_check).toBe('not_registered');
  });

  it('is deterministic: the same proposal gets the same outcome and risk', async () => {
    const body = proposal(
      'database.write',
      { database: 'production', statement: 's' },
      { context: { metadata: { environment: 'production' } } },
    );
    const a = await propose(body);
    const b = await propose(body);
    expect(a.body.outcome).toBe(b.body.outcome);
    expect(a.body.risk_score).toBe(b.body.risk_score);
    expect(a.body.decision_id).not.toBe(b.body.decision_id);
  });
});

describe('propose: request-level failures', () => {
  it('401 without a key and with a wrong key, with the error body', async () => {
    const none = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      body: proposal('database.query', { query: 'x' }),
    });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.any(String),
      request_id: expect.any(String),
    });
    expect(none.headers.get('x-request-id')).toBe(none.body.error.request_id);
    const wrong = await propose(proposal('database.query', { query: 'x' }), 'not-a-key');
    expect(wrong.status).toBe(401);
  });

  it('403 for a key without governance:propose, and ACTOR_MISMATCH for another actor', async () => {
    const scope = await propose(proposal('database.query', { query: 'x' }), KEYS.auditor);
    expect(scope.status).toBe(403);
    expect(scope.body.error.code).toBe('FORBIDDEN');
    const other = await propose({
      ...proposal('database.query', { query: 'x' }),
      actor: { id: 'agent-002', type: 'ai-agent' },
    });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ACTOR_MISMATCH');
  });

  it.each([
    ['missing actor', { action: { capability: 'database.query', parameters: {} } }],
    ['missing action', { actor: { id: 'agent-001', type: 'ai-agent' } }],
    [
      'bad actor type',
      { actor: { id: 'agent-001', type: 'robot' }, action: { capability: 'database.query', parameters: {} } },
    ],
    [
      'empty actor id',
      { actor: { id: '', type: 'ai-agent' }, action: { capability: 'database.query', parameters: {} } },
    ],
    ['capability without a dot', proposal('databasequery', {})],
    ['capability in upper case', proposal('Database.Query', {})],
    ['capability too long', proposal(`a.${'b'.repeat(200)}`, {})],
    [
      'parameters not an object',
      { ...proposal('database.query', {}), action: { capability: 'database.query', parameters: [1] } },
    ],
    [
      'parameters a string',
      { ...proposal('database.query', {}), action: { capability: 'database.query', parameters: 'x' } },
    ],
    ['unknown top-level field', { ...proposal('database.query', {}), extra: 1 }],
    ['a JSON array', [1, 2]],
    ['a JSON string', 'hello'],
    ['null', null],
  ])('400 INVALID_REQUEST: %s', async (_name, body) => {
    const res = await propose(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_REQUEST');
  });

  it('400 for malformed JSON, __proto__ keys and deep nesting; 415 for other media types; 413 past 1 MiB', async () => {
    const headers = { 'content-type': 'application/json' };
    const malformed = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      rawBody: '{"actor":',
      headers,
    });
    expect(malformed.status).toBe(400);
    const proto = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      rawBody:
        '{"actor":{"id":"agent-001","type":"ai-agent"},"action":{"capability":"database.query","parameters":{"__proto__":{"admin":true}}}}',
      headers,
    });
    expect(proto.status).toBe(400);
    expect(proto.body.error.message).toMatch(/__proto__/);
    const deep = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      rawBody: `{"actor":{"id":"agent-001","type":"ai-agent"},"action":{"capability":"database.query","parameters":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`,
      headers,
    });
    expect(deep.status).toBe(400);
    const text = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      rawBody: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const huge = await propose(proposal('database.query', { query: 'x'.repeat(1024 * 1024 + 10) }));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('404 with the error body for unknown routes', async () => {
    const res = await call(arbiter.url, 'GET', '/api/v1/nothing', { key: KEYS.admin });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe("the service's own per-key rate limit", () => {
  it('answers 429 with Retry-After and X-RateLimit headers once the burst is spent', async () => {
    const limited = await startArbiter({ args: ['--key-rate-limit', '1', '--key-burst', '3'] });
    try {
      const results = [];
      for (let i = 0; i < 5; i += 1) {
        results.push(
          await call(limited.url, 'POST', '/api/v1/governance/propose', {
            key: KEYS.agent,
            body: proposal('database.query', { query: 'x' }),
          }),
        );
      }
      const last = results[4]!;
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      expect(last.body.error.code).toBe('RATE_LIMITED');
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last.headers.get('x-ratelimit-limit')).toBe('3');
      expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
      const other = await call(limited.url, 'GET', '/api/v1/capabilities', { key: KEYS.admin });
      expect(other.status).toBe(200);
    } finally {
      await limited.stop();
      await removeDir(limited.dataDir);
    }
  });
});
