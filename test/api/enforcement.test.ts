import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

/** A policy rolled out in audit, then warn mode, before it enforces: through the real API. */
describe('policy enforcement modes', () => {
  const arbiter = useArbiter();
  const admin = (method: string, path: string, body?: unknown) =>
    call(arbiter.url, method, `/api/v1${path}`, { key: KEYS.admin, ...(body === undefined ? {} : { body }) });
  const propose = () =>
    call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'database.query', parameters: { query: 'drop table users' } },
      },
    });
  const rules = [
    { capability: 'database.query', condition: "parameters.query.startsWith('drop')", outcome: 'DENY' },
  ];
  const shadowCount = async () => {
    const metrics = String((await call(arbiter.url, 'GET', '/metrics')).body);
    const match = /^arbiter_policy_shadow_total\{policy="no-drops",would_be="DENY"\} (\d+)$/m.exec(metrics);
    return match ? Number(match[1]) : 0;
  };

  it('audit records what the policy would decide; warn also tells the caller; enforce decides', async () => {
    const created = await admin('POST', '/policies', {
      name: 'no-drops',
      description: 'trial',
      enforcement_action: 'audit',
      rules,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.enforcement_action).toBe('audit');

    const audited = await propose();
    expect(audited.body.outcome).toBe('ALLOW');
    expect(audited.body.warnings).toBeUndefined();
    const trail = await admin('GET', `/audit/log/${audited.body.decision_id}`);
    expect(JSON.stringify(trail.body)).toContain(
      '"shadow_decision":{"enforcement":"audit","outcome":"DENY","policy":"no-drops","rule_index":0}',
    );
    expect(await shadowCount()).toBe(1);

    expect(
      (await admin('PUT', '/policies/no-drops', { description: 'trial', enforcement_action: 'warn', rules }))
        .status,
    ).toBe(200);
    const warned = await propose();
    expect(warned.body.outcome).toBe('ALLOW');
    expect(warned.body.warnings).toEqual([
      'policy no-drops (enforcementAction warn), rule 0, would have decided DENY',
    ]);
    expect(await shadowCount()).toBe(2);

    expect((await admin('PUT', '/policies/no-drops', { description: 'live', rules })).status).toBe(200);
    expect((await admin('GET', '/policies/no-drops')).body.enforcement_action).toBe('enforce');
    const enforced = await propose();
    expect(enforced.body).toMatchObject({ outcome: 'DENY' });
    expect(enforced.body.warnings).toBeUndefined();
    expect(await shadowCount()).toBe(2);
  });
});
