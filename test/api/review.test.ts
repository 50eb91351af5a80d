import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter();
const body = (
  capability: string,
  parameters: Record<string, unknown>,
  context: Record<string, unknown> = {},
) => ({
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability, parameters },
  context,
});
const propose = (b: unknown) =>
  call(arbiter.url, 'POST', '/api/v1/governance/propose', { key: KEYS.agent, body: b });
const review = (id: string, action: string, key: string = KEYS.reviewer) =>
  call(arbiter.url, 'POST', `/api/v1/governance/decisions/${id}/${action}`, {
    key,
    body: { comment: 'checked' },
  });

describe('review of pending decisions', () => {
  it('approving a REQUIRE_CONFIRMATION returns a one-time token that allows exactly that proposal once', async () => {
    const write = body('database.write', { database: 'production', statement: 'update t set a=1' });
    const first = await propose(write);
    expect(first.body.outcome).toBe('REQUIRE_CONFIRMATION');
    const pending = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${first.body.decision_id}`, {
      key: KEYS.reviewer,
    });
    expect(pending.body.audit.status).toBe('pending');
    expect((await review(first.body.decision_id, 'approve', KEYS.agent)).status).toBe(403);
    const approved = await review(first.body.decision_id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.audit.status).toBe('approved');
    const token = approved.body.confirmation_token as string;
    expect(token).toEqual(expect.any(String));

    const otherProposal = await propose(
      body(
        'database.write',
        { database: 'production', statement: 'drop table t' },
        { confirmation_token: token },
      ),
    );
    expect(otherProposal.status).toBe(400);
    const confirmed = await propose({ ...write, context: { confirmation_token: token } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.outcome).toBe('ALLOW');
    const reused = await propose({ ...write, context: { confirmation_token: token } });
    expect(reused.status).toBe(409);
    expect((await review(first.body.decision_id, 'deny')).status).toBe(409);
  });

  it('denying an ESCALATE records the transition; ALLOW decisions are not reviewable', async () => {
    const escalated = await propose(body('deploy.production', { service: 'web', version: '2' }));
    expect(escalated.body.outcome).toBe('ESCALATE');
    const denied = await review(escalated.body.decision_id, 'deny');
    expect(denied.body.audit.status).toBe('denied');
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${escalated.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.body.review.reviews).toMatchObject([
      { action: 'deny', reviewer: 'reviewer', comment: 'checked' },
    ]);
    const allowed = await propose(body('database.query', { query: 'q' }));
    expect((await review(allowed.body.decision_id, 'approve')).status).toBe(409);
    expect((await review('missing', 'approve')).status).toBe(404);
  });

  it('an execution report fills the trail once; not for denied decisions', async () => {
    const allowed = await propose(body('database.query', { query: 'q' }));
    const path = `/api/v1/governance/decisions/${allowed.body.decision_id}/execution`;
    const reported = await call(arbiter.url, 'POST', path, {
      key: KEYS.agent,
      body: { status: 'completed', result_summary: '3 rows', duration_ms: 12 },
    });
    expect(reported.status).toBe(201);
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${allowed.body.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.body.execution).toMatchObject({
      status: 'completed',
      result_summary: '3 rows',
      duration_ms: 12,
      completed_at: expect.any(String),
    });
    expect(
      (await call(arbiter.url, 'POST', path, { key: KEYS.agent, body: { status: 'completed' } })).status,
    ).toBe(409);
    const denied = await propose(body('payments.transfer', { amount: 99999, currency: 'USD', to: 'x' }));
    const deniedPath = `/api/v1/governance/decisions/${denied.body.decision_id}/execution`;
    expect(
      (await call(arbiter.url, 'POST', deniedPath, { key: KEYS.agent, body: { status: 'completed' } }))
        .status,
    ).toBe(409);
    expect(
      (await call(arbiter.url, 'POST', path, { key: KEYS.agent, body: { status: 'exploded' } })).status,
    ).toBe(400);
  });
});
