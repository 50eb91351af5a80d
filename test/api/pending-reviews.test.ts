import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';
import { readStreamUntil } from '../support/read-event-stream.js';

// Decisions wait 3 s by default here, so the expiry is seen without a long wait.
const arbiter = useArbiter({ args: ['--pending-ttl', '3'] });

const propose = (capability: string, parameters: Record<string, unknown>) =>
  call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
  });
const deploy = (version: string) => propose('deploy.production', { service: 'web', version });
const pendingIds = async (query = '') => {
  const res = await call(arbiter.url, 'GET', `/api/v1/governance/pending${query}`, { key: KEYS.reviewer });
  expect(res.status).toBe(200);
  return res.body as {
    decisions: Array<{ decision_id: string; audit: { status: string } }>;
    total: number;
    cursor: string | null;
  };
};
const expiriesOf = async (decisionId: string) => {
  const res = await call(
    arbiter.url,
    'GET',
    `/api/v1/audit/log?decision_id=${decisionId}&event_type=governance.review`,
    { key: KEYS.auditor },
  );
  return (res.body.entries as Array<{ data: { action: string; reviewer: string } }>).filter(
    (e) => e.data.action === 'expire',
  );
};

describe('pending decisions', () => {
  it('are listed oldest first, in pages, until reviewed', async () => {
    const first = (await deploy('1')).body.decision_id as string;
    const second = (await deploy('2')).body.decision_id as string;
    const third = (await deploy('3')).body.decision_id as string;
    const all = await pendingIds();
    const mine = all.decisions.map((d) => d.decision_id).filter((id) => [first, second, third].includes(id));
    expect(mine).toEqual([first, second, third]);
    expect(all.decisions.every((d) => d.audit.status === 'pending')).toBe(true);

    // Paging: one at a time, the cursor leads through all of them.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await pendingIds(`?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.decisions.length).toBeLessThanOrEqual(1);
      seen.push(...page.decisions.map((d) => d.decision_id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen.filter((id) => [first, second, third].includes(id))).toEqual([first, second, third]);

    await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${second}/deny`, {
      key: KEYS.reviewer,
      body: {},
    });
    const after = (await pendingIds()).decisions.map((d) => d.decision_id);
    expect(after).not.toContain(second);
    expect(after).toContain(third);
  });

  it('needs a credential, and rejects a bad limit or cursor with 400', async () => {
    expect((await call(arbiter.url, 'GET', '/api/v1/governance/pending')).status).toBe(401);
    const badLimit = await call(arbiter.url, 'GET', '/api/v1/governance/pending?limit=0', {
      key: KEYS.reviewer,
    });
    expect(badLimit.status).toBe(400);
    const badCursor = await call(arbiter.url, 'GET', '/api/v1/governance/pending?cursor=nope', {
      key: KEYS.reviewer,
    });
    expect(badCursor.status).toBe(400);
  });

  it('wait as long as the reviewTtlSeconds of the rule that escalated them (example: payments, 15 min)', async () => {
    const res = await propose('payments.transfer', { amount: 5000, currency: 'EUR', to: 'acct-1' });
    expect(res.body.outcome).toBe('REQUIRE_CONFIRMATION');
    const decision = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${res.body.decision_id}`, {
      key: KEYS.reviewer,
    });
    const waited = Date.parse(decision.body.audit.expires_at) - Date.parse(decision.body.timestamp);
    expect(waited).toBe(900_000); // not the server's --pending-ttl of 3 s
    const policy = await call(arbiter.url, 'GET', '/api/v1/policies/payment-limits', { key: KEYS.admin });
    expect(policy.body.rules[1]).toMatchObject({ review_ttl_seconds: 900 });
  });

  it('refuse a review deadline outside 1 s .. 7 days through the API (400)', async () => {
    for (const ttl of [0, 604_801, 1.5]) {
      const res = await call(arbiter.url, 'POST', '/api/v1/policies', {
        key: KEYS.admin,
        body: {
          name: `ttl-${String(ttl).replace('.', '-')}`,
          rules: [{ capability: 'deploy.production', outcome: 'ESCALATE', review_ttl_seconds: ttl }],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).toContain('review_ttl_seconds');
    }
  });

  it('expire at their deadline with nobody asking: one expiry entry, gone from the list', async () => {
    const id = (await deploy('expiring')).body.decision_id as string;
    expect((await pendingIds()).decisions.map((d) => d.decision_id)).toContain(id);
    await expect.poll(async () => (await expiriesOf(id)).length, { timeout: 15_000, interval: 250 }).toBe(1);
    const [expiry] = await expiriesOf(id);
    expect(expiry!.data.reviewer).toBe('arbiter');
    expect((await pendingIds()).decisions.map((d) => d.decision_id)).not.toContain(id);
    const metrics = await call(arbiter.url, 'GET', '/metrics');
    expect(String(metrics.body)).toMatch(/^arbiter_decisions_expired_total [1-9]/m);
    // Written once: a later sweep or a review attempt adds no second expiry.
    const late = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${id}/approve`, {
      key: KEYS.reviewer,
      body: {},
    });
    expect(late.status).toBe(409);
    expect(await expiriesOf(id)).toHaveLength(1);
  });
});

describe('the live pending queue (text/event-stream)', () => {
  it('tells a reviewer when a decision starts waiting and when it is settled, ids only', async () => {
    const controller = new AbortController();
    const response = await fetch(`${arbiter.url}/api/v1/governance/pending`, {
      headers: { authorization: `Bearer ${KEYS.reviewer}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const allowed = await propose('database.query', { query: 'select 1' });
    const waiting = (await deploy('live')).body.decision_id as string;
    const approval = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${waiting}/approve`, {
      key: KEYS.reviewer,
      body: {},
    });
    expect(approval.status).toBe(200);
    const received = await readStreamUntil(response, controller, (text) =>
      text.includes('"status":"approved"'),
    );
    expect(received).toContain(
      `event: decision.pending\ndata: {"decision_id":"${waiting}","outcome":"ESCALATE"}\n\n`,
    );
    expect(received).toContain(
      `event: decision.settled\ndata: {"decision_id":"${waiting}","status":"approved"}\n\n`,
    );
    // An ALLOW never waits; and nothing of the request is streamed.
    expect(received).not.toContain(allowed.body.decision_id);
    expect(received).not.toContain('deploy.production');
  });
});
