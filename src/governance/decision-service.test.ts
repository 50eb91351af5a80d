import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import type { Outcome, ShadowDecision } from '../model/index.js';
import type { DecisionService } from './decision-service.js';
import { serviceOnTempLog } from './test-decision-service.js';

/** files.write granted to agent-1; a policy gives the outcome asked for. */
const worldDeciding = (outcome: Outcome): IndexSnapshot =>
  buildIndex([
    capability('files.write'),
    grant('agent-1-files', 'agent-1', [{ capability: 'files.write' }]),
    policy('gate', [{ capability: 'files.write', outcome }]),
  ]);

let now: Date;
let snapshot: IndexSnapshot;
let close: () => Promise<void>;
let service: DecisionService;
let log: FileAuditLog;
const write = (context?: Parameters<typeof proposal>[3]) =>
  proposal('files.write', { path: '/a' }, {}, context);

beforeEach(async () => {
  now = new Date('2026-11-23T12:00:00Z');
  snapshot = worldDeciding('ESCALATE');
  ({ service, close, log } = await serviceOnTempLog(
    () => snapshot,
    () => now,
  ));
});
afterEach(() => close());

describe('DecisionService: pending decisions', () => {
  it('an ESCALATE decision is pending until its TTL, then expired: reviews are refused, recordExpiry writes it once', async () => {
    const decision = await service.propose(write(), 'key');
    expect((await service.get(decision.decision_id)).status).toBe('pending');
    now = new Date('2026-11-23T12:09:59.999Z');
    expect((await service.get(decision.decision_id)).status).toBe('pending');
    expect(await service.recordExpiry(decision.decision_id)).toBeUndefined();
    now = new Date('2026-11-23T12:10:00Z');
    expect((await service.get(decision.decision_id)).status).toBe('expired');
    await expect(service.review(decision.decision_id, 'approve', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('already expired'),
    });
    // A refused review writes nothing: the expiry has one writer (the leader's sweeper).
    expect((await service.get(decision.decision_id)).reviews).toEqual([]);
    const expiry = await service.recordExpiry(decision.decision_id);
    expect(expiry?.event_type).toBe('governance.review');
    expect(await service.recordExpiry(decision.decision_id)).toBeUndefined();
    const record = await service.get(decision.decision_id);
    expect(record.reviews.map((r) => [r.data.action, r.data.reviewer])).toEqual([['expire', 'arbiter']]);
    await expect(service.review(decision.decision_id, 'deny', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect((await service.get(decision.decision_id)).reviews).toHaveLength(1);
  });

  it('a REQUIRE_CONFIRMATION decision expires the same way', async () => {
    snapshot = worldDeciding('REQUIRE_CONFIRMATION');
    const decision = await service.propose(write(), 'key');
    now = new Date('2026-11-23T12:10:01Z');
    expect((await service.get(decision.decision_id)).status).toBe('expired');
  });

  it('a recorded expiry is final, even read by a replica whose clock is behind', async () => {
    const decision = await service.propose(write(), 'key');
    now = new Date('2026-11-23T12:10:00Z');
    await service.recordExpiry(decision.decision_id);
    expect((await service.get(decision.decision_id)).status).toBe('expired');
    now = new Date('2026-11-23T12:05:00Z');
    expect((await service.get(decision.decision_id)).status).toBe('expired');
    await expect(service.review(decision.decision_id, 'approve', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('already expired'),
    });
  });

  it('a denied decision stays denied: a second review is refused', async () => {
    const decision = await service.propose(write(), 'key');
    await service.review(decision.decision_id, 'deny', 'reviewer');
    expect((await service.get(decision.decision_id)).status).toBe('denied');
    await expect(service.review(decision.decision_id, 'approve', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `decision ${decision.decision_id} is already denied`,
    });
  });

  it('records the reviewer and comment in an entry linked to the decision', async () => {
    const decision = await service.propose(write(), 'key');
    const { record } = await service.review(decision.decision_id, 'approve', 'reviewer', 'looks fine');
    expect(record.status).toBe('approved');
    const [review] = record.reviews;
    expect(review!.data).toEqual({ action: 'approve', reviewer: 'reviewer', comment: 'looks fine' });
    expect(review!.entry).toMatchObject({
      event_type: 'governance.review',
      actor_id: 'agent-1',
      capability: 'files.write',
      decision_id: decision.decision_id,
      outcome: null,
      risk_score: null,
      policies_evaluated: [],
      policy_matched: null,
    });
  });
});

describe("DecisionService: a rule's reviewTtlSeconds", () => {
  const deciding = (outcome: Outcome, reviewTtlSeconds: number, riskLevel: 'low' | 'critical' = 'low') =>
    buildIndex([
      capability('files.write', { riskLevel }),
      grant('agent-1-files', 'agent-1', [{ capability: 'files.write' }]),
      policy('gate', [{ capability: 'files.write', outcome, reviewTtlSeconds }]),
    ]);

  it('sets how long a decision it escalates waits, instead of the default', async () => {
    snapshot = deciding('ESCALATE', 900);
    const decision = await service.propose(write(), 'key');
    const record = await service.get(decision.decision_id);
    expect(record.data.expires_at).toBe('2026-11-23T12:15:00.000Z');
    expect(record.data.evaluation.rule_matched).toMatchObject({ review_ttl_seconds: 900 });
    now = new Date('2026-11-23T12:14:59.999Z');
    expect((await service.get(decision.decision_id)).status).toBe('pending');
    now = new Date('2026-11-23T12:15:00Z');
    expect((await service.get(decision.decision_id)).status).toBe('expired');
  });

  it('applies to REQUIRE_CONFIRMATION too, and may be longer than the default', async () => {
    snapshot = deciding('REQUIRE_CONFIRMATION', 86_400);
    const decision = await service.propose(write(), 'key');
    expect((await service.get(decision.decision_id)).data.expires_at).toBe('2026-11-24T12:00:00.000Z');
  });

  it('does not apply when the risk score escalated past the rule (the rule allowed)', async () => {
    snapshot = deciding('ALLOW', 900, 'critical');
    const decision = await service.propose(write(), 'key');
    expect(decision.outcome).toBe('ESCALATE');
    expect((await service.get(decision.decision_id)).data.expires_at).toBe('2026-11-23T12:10:00.000Z');
  });
});

describe('DecisionService: decisions that need no review', () => {
  it('an ALLOW is not pending, never expires, cannot be reviewed, and may be reported as executed', async () => {
    snapshot = worldDeciding('ALLOW');
    const decision = await service.propose(write(), 'key');
    expect(decision.outcome).toBe('ALLOW');
    const record = await service.get(decision.decision_id);
    expect(record.status).toBe('not_required');
    expect(record.data.expires_at).toBeUndefined();
    await expect(service.review(decision.decision_id, 'approve', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `decision ${decision.decision_id} is ALLOW; only ESCALATE and REQUIRE_CONFIRMATION are reviewed`,
    });
    const report = { status: 'completed' as const, result_summary: null, duration_ms: null };
    const executed = await service.reportExecution(decision.decision_id, report, 'key');
    expect(executed.execution?.data.status).toBe('completed');
  });

  it('answers NOT_FOUND for a decision it does not know', async () => {
    await expect(service.get('no-such-id')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'no decision no-such-id',
    });
  });

  it('returns the warnings of warn-mode policies and tells onShadowDecision what they would have decided', async () => {
    const trial = policy('trial', [{ capability: 'files.write', outcome: 'DENY' }]);
    snapshot = buildIndex([
      capability('files.write'),
      grant('agent-1-files', 'agent-1', [{ capability: 'files.write' }]),
      policy('gate', [{ capability: 'files.write', outcome: 'ALLOW' }]),
      { ...trial, spec: { ...trial.spec, enforcementAction: 'warn' } },
    ]);
    const shadows: ShadowDecision[] = [];
    const observed = await serviceOnTempLog(
      () => snapshot,
      () => now,
      { onShadowDecision: (shadow) => shadows.push(shadow) },
    );
    const decision = await observed.service.propose(write(), 'key').finally(() => observed.close());
    expect(decision.outcome).toBe('ALLOW');
    expect(decision.warnings).toEqual([
      'policy trial (enforcementAction warn), rule 0, would have decided DENY',
    ]);
    expect(shadows).toEqual([{ outcome: 'DENY', policy: 'trial', rule_index: 0, enforcement: 'warn' }]);
  });
});

describe('DecisionService: confirmation tokens', () => {
  async function token(): Promise<string> {
    snapshot = worldDeciding('REQUIRE_CONFIRMATION');
    const decision = await service.propose(write(), 'key');
    const approved = await service.review(decision.decision_id, 'approve', 'reviewer');
    return approved.confirmation_token!;
  }

  it('turns the REQUIRE_CONFIRMATION it was issued for into ALLOW, once', async () => {
    const issued = await token();
    expect((await service.propose(write({ confirmation_token: issued }), 'key')).outcome).toBe('ALLOW');
    await expect(service.propose(write({ confirmation_token: issued }), 'key')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'context.confirmation_token was already used',
    });
  });

  it('is issued only to an approval, as ct_<decision id>.<192 random bits>', async () => {
    snapshot = worldDeciding('REQUIRE_CONFIRMATION');
    const decision = await service.propose(write(), 'key');
    const { confirmation_token: issued } = await service.review(decision.decision_id, 'approve', 'reviewer');
    expect(issued).toMatch(new RegExp(`^ct_${decision.decision_id}\\.[A-Za-z0-9_-]{32}$`));
    const denied = await service.propose(write(), 'key');
    const refusal = await service.review(denied.decision_id, 'deny', 'reviewer');
    expect(refusal.confirmation_token).toBeUndefined();
    expect(refusal.record.reviews[0]!.data.token_sha256).toBeUndefined();
  });

  it('is not issued for an approved ESCALATE', async () => {
    const decision = await service.propose(write(), 'key');
    const approved = await service.review(decision.decision_id, 'approve', 'reviewer');
    expect(approved.confirmation_token).toBeUndefined();
    expect(approved.record.reviews[0]!.data.token_sha256).toBeUndefined();
  });

  it('records whose approval the confirmed decision used, in its reason and trail', async () => {
    const issued = await token();
    const approvedId = issued.slice('ct_'.length).split('.')[0]!;
    const confirmed = await service.propose(write({ confirmation_token: issued }), 'key');
    expect(confirmed.reason).toMatch(new RegExp(`^confirmed by reviewer \\(decision ${approvedId}\\); `));
    expect((await service.get(confirmed.decision_id)).data.confirmation_of).toBe(approvedId);
    // The recorded data's members in canonical order, the optional ones only where they apply.
    expect(Object.keys((await service.get(confirmed.decision_id)).data)).toEqual([
      'confirmation_of',
      'decision',
      'evaluation',
      'principal',
      'request',
    ]);
    expect(Object.keys((await service.get(approvedId)).data)).toEqual([
      'decision',
      'evaluation',
      'expires_at',
      'principal',
      'request',
    ]);
    const approval = await service.get(approvedId);
    expect(approval.reviews.map((r) => [r.data.action, r.data.reviewer])).toEqual([
      ['approve', 'reviewer'],
      ['confirmation_used', 'key'],
    ]);
  });

  it('is refused for another proposal or when forged, and stays usable for its own', async () => {
    const issued = await token();
    const invalid = {
      code: 'INVALID_REQUEST',
      message: 'context.confirmation_token is not valid for this proposal',
    };
    const other = proposal('files.write', { path: '/b' }, {}, { confirmation_token: issued });
    await expect(service.propose(other, 'key')).rejects.toMatchObject(invalid);
    const forged = `${issued.slice(0, issued.indexOf('.'))}.${'A'.repeat(32)}`;
    await expect(service.propose(write({ confirmation_token: forged }), 'key')).rejects.toMatchObject(
      invalid,
    );
    expect((await service.propose(write({ confirmation_token: issued }), 'key')).outcome).toBe('ALLOW');
  });

  it('lets only one of two concurrent proposals use it', async () => {
    const issued = await token();
    const results = await Promise.allSettled([
      service.propose(write({ confirmation_token: issued }), 'key'),
      service.propose(write({ confirmation_token: issued }), 'key'),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.outcome : r.reason))).toEqual([
      'ALLOW',
      expect.objectContaining({
        code: 'CONFLICT',
        message: 'context.confirmation_token was already used',
      }),
    ]);
  });

  it('stays usable when its use cannot be recorded: that proposal fails closed', async () => {
    const issued = await token();
    const append = log.append.bind(log);
    log.append = (event) =>
      event.data.action === 'confirmation_used'
        ? Promise.reject(new Error('audit log unavailable'))
        : append(event);
    await expect(service.propose(write({ confirmation_token: issued }), 'key')).rejects.toThrow(
      'audit log unavailable',
    );
    log.append = append;
    expect((await service.propose(write({ confirmation_token: issued }), 'key')).outcome).toBe('ALLOW');
  });

  it.each(['DENY', 'ESCALATE'] as const)(
    'never lifts a %s the configuration now gives, and stays unused',
    async (now) => {
      const issued = await token();
      snapshot = worldDeciding(now);
      const decided = await service.propose(write({ confirmation_token: issued }), 'key');
      expect(decided.outcome).toBe(now);
      // Not consumed: once the configuration asks for confirmation again, the token still works.
      snapshot = worldDeciding('REQUIRE_CONFIRMATION');
      expect((await service.propose(write({ confirmation_token: issued }), 'key')).outcome).toBe('ALLOW');
    },
  );
});

describe('DecisionService: execution reports', () => {
  it('accepts a report for an approved ESCALATE, not before it is approved, and only once', async () => {
    const decision = await service.propose(write(), 'key');
    const report = { status: 'completed' as const, result_summary: 'done', duration_ms: 12 };
    await expect(service.reportExecution(decision.decision_id, report, 'key')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `decision ${decision.decision_id} was not allowed; nothing may be executed`,
    });
    await service.review(decision.decision_id, 'approve', 'reviewer');
    const record = await service.reportExecution(decision.decision_id, report, 'key');
    expect(record.execution?.data).toMatchObject({
      status: 'completed',
      result_summary: 'done',
      reporter: 'key',
    });
    await expect(service.reportExecution(decision.decision_id, report, 'key')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `execution of decision ${decision.decision_id} was already reported`,
    });
  });

  it('refuses a report for a denied ESCALATE', async () => {
    const decision = await service.propose(write(), 'key');
    await service.review(decision.decision_id, 'deny', 'reviewer');
    await expect(
      service.reportExecution(
        decision.decision_id,
        { status: 'failed', result_summary: null, duration_ms: null },
        'key',
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
