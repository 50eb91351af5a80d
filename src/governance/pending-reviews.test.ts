import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import type { Outcome } from '../model/index.js';
import type { DecisionService } from './decision-service.js';
import { serviceOnTempLog } from './test-decision-service.js';
import { LocalClaims } from '../redis/replica-claims.js';
import { governanceKeepers } from './archive-keepers.js';
import { ExpirySweeper } from './expiry-sweeper.js';
import { PendingReviews } from './pending-reviews.js';

/** files.write granted to agent-1; the policy's rule for a path decides the outcome. */
const world: IndexSnapshot = buildIndex([
  capability('files.write'),
  grant('agent-1-files', 'agent-1', [{ capability: 'files.write' }]),
  policy('gate', [
    { capability: 'files.write', condition: "parameters.path == '/escalate'", outcome: 'ESCALATE' },
    {
      capability: 'files.write',
      condition: "parameters.path == '/confirm'",
      outcome: 'REQUIRE_CONFIRMATION',
      reviewTtlSeconds: 60,
    },
    { capability: 'files.write', condition: "parameters.path == '/deny'", outcome: 'DENY' },
  ]),
]);
const pathFor: Record<Outcome, string> = {
  ESCALATE: '/escalate',
  REQUIRE_CONFIRMATION: '/confirm',
  DENY: '/deny',
  ALLOW: '/other',
};

let now: Date;
let log: FileAuditLog;
let close: () => Promise<void>;
let service: DecisionService;
const propose = (outcome: Outcome) =>
  service.propose(proposal('files.write', { path: pathFor[outcome] }), 'agent-key');

beforeEach(async () => {
  now = new Date('2026-11-23T12:00:00Z');
  ({ service, log, close } = await serviceOnTempLog(
    () => world,
    () => now,
  ));
});
afterEach(() => close());

const ids = (pending: PendingReviews) => pending.list().map((w) => w.decisionId);

describe('PendingReviews', () => {
  it('follows the feed: decisions that need review wait, oldest first, until a verdict', async () => {
    const pending = new PendingReviews();
    log.subscribe((entry) => pending.observe(entry));
    const escalated = await propose('ESCALATE');
    await propose('ALLOW');
    await propose('DENY');
    const confirm = await propose('REQUIRE_CONFIRMATION');
    expect(ids(pending)).toEqual([escalated.decision_id, confirm.decision_id]);
    expect(pending.list()[1]!.expiresAtMs).toBe(Date.parse('2026-11-23T12:01:00Z'));
    // The listing's order and cursor are the decision entry's seq.
    const [decisionEntry] = await log.byDecision(confirm.decision_id);
    expect(pending.list()[1]!.seq).toBe(decisionEntry!.seq);

    const { confirmation_token } = await service.review(confirm.decision_id, 'approve', 'reviewer');
    expect(ids(pending)).toEqual([escalated.decision_id]);
    // A used confirmation token is no verdict and does not bring the decision back.
    await service.propose(
      proposal('files.write', { path: '/confirm' }, {}, { confirmation_token: confirmation_token! }),
      'agent-key',
    );
    expect(ids(pending)).toEqual([escalated.decision_id]);
    await service.review(escalated.decision_id, 'deny', 'reviewer');
    expect(pending.size).toBe(0);
  });

  it('seeds from the log what still waits, and what is overdue but not yet recorded as expired', async () => {
    const reviewed = await propose('ESCALATE');
    await service.review(reviewed.decision_id, 'approve', 'reviewer');
    const waiting = await propose('ESCALATE');
    const overdue = await propose('REQUIRE_CONFIRMATION');
    now = new Date('2026-11-23T12:05:00Z');
    const pending = new PendingReviews();
    await pending.seed(log, now, 600);
    expect(ids(pending)).toEqual([waiting.decision_id, overdue.decision_id]);
    expect(pending.due(now.getTime()).map((w) => w.decisionId)).toEqual([overdue.decision_id]);
  });

  it('seeds no decision with any verdict (approve, deny, expire), and keeps one only confirmed as used', async () => {
    const approved = await propose('ESCALATE');
    await service.review(approved.decision_id, 'approve', 'reviewer');
    const denied = await propose('ESCALATE');
    await service.review(denied.decision_id, 'deny', 'reviewer');
    const expired = await propose('REQUIRE_CONFIRMATION');
    const waiting = await propose('ESCALATE');
    now = new Date('2026-11-23T12:01:00Z');
    await service.recordExpiry(expired.decision_id);
    const pending = new PendingReviews();
    await pending.seed(log, now, 600);
    expect(ids(pending)).toEqual([waiting.decision_id]);
  });

  it('seeds verdicts across pages, and one stamped a little before its decision (another clock)', async () => {
    const made: string[] = [];
    for (let i = 0; i < 205; i++) made.push((await propose('ESCALATE')).decision_id);
    for (const id of made.slice(2)) await service.review(id, 'approve', 'reviewer');
    // A reviewer's replica ten minutes behind: the verdict predates its decision.
    now = new Date('2026-11-23T11:50:00Z');
    await service.review(made[1]!, 'deny', 'reviewer');
    const pending = new PendingReviews();
    // Five minutes before the decisions leave the week's horizon; the verdict already has.
    await pending.seed(log, new Date('2026-11-30T11:55:00Z'), 600);
    expect(ids(pending)).toEqual([made[0]]);
  });

  it('seeds nothing older than the longest review TTL (a week) or the default, if longer', async () => {
    await propose('ESCALATE');
    const later = new Date('2026-12-01T12:00:01Z');
    const pending = new PendingReviews();
    await pending.seed(log, later, 600);
    expect(pending.size).toBe(0);
    await pending.seed(log, later, 9 * 86_400);
    expect(pending.size).toBe(1);
  });

  it('seeds across pages', async () => {
    const made: string[] = [];
    for (let i = 0; i < 205; i++) made.push((await propose('ESCALATE')).decision_id);
    const pending = new PendingReviews();
    await pending.seed(log, now, 600);
    expect(ids(pending)).toEqual(made);
  });
});

describe('what an archive run keeps (governanceKeepers)', () => {
  const seqOf = async (decisionId: string) => (await log.byDecision(decisionId))[0]!.seq;

  it('the oldest decision without a verdict, overdue ones included, until one is recorded', async () => {
    const keepers = governanceKeepers(log, () => now, 600);
    await propose('ALLOW');
    expect(await keepers.oldestInUse()).toBeUndefined();
    const first = await propose('ESCALATE');
    const approved = await propose('REQUIRE_CONFIRMATION');
    const second = await propose('ESCALATE');
    await service.review(approved.decision_id, 'approve', 'reviewer');
    expect(await keepers.oldestInUse()).toEqual({
      seq: await seqOf(first.decision_id),
      reason: `decision ${first.decision_id} waits for review (until 2026-11-23T12:10:00.000Z)`,
    });

    await service.review(first.decision_id, 'deny', 'reviewer');
    expect((await keepers.oldestInUse())?.seq).toBe(await seqOf(second.decision_id));
    // Past its deadline it still waits: for its expiry to be recorded (and notified).
    now = new Date('2026-11-23T13:00:00Z');
    expect((await keepers.oldestInUse())?.seq).toBe(await seqOf(second.decision_id));
    await service.recordExpiry(second.decision_id);
    expect(await keepers.oldestInUse()).toBeUndefined();
  });
});

describe('ExpirySweeper', () => {
  const sweeperFor = (pending: PendingReviews, leader = true, claims = new LocalClaims()) =>
    new ExpirySweeper({
      pending,
      claims,
      recordExpiry: (id) => service.recordExpiry(id),
      clock: () => now,
      isLeader: () => leader,
      logger: pino({ level: 'silent' }),
      intervalMs: 10,
    });

  it('records each expiry once, when its deadline has passed, with nobody asking', async () => {
    const pending = new PendingReviews();
    log.subscribe((entry) => pending.observe(entry));
    const confirm = await propose('REQUIRE_CONFIRMATION'); // 60 s by its rule
    const escalated = await propose('ESCALATE'); // 600 s by default
    const sweeper = sweeperFor(pending);
    now = new Date('2026-11-23T12:00:59.999Z');
    expect(await sweeper.sweep()).toBe(0);
    now = new Date('2026-11-23T12:01:00Z');
    expect(await sweeper.sweep()).toBe(1);
    expect(await sweeper.sweep()).toBe(0);
    const record = await service.get(confirm.decision_id);
    expect(record.reviews.map((r) => [r.data.action, r.data.reviewer])).toEqual([['expire', 'arbiter']]);
    expect(ids(pending)).toEqual([escalated.decision_id]);
    now = new Date('2026-11-23T12:10:00Z');
    expect(await sweeper.sweep()).toBe(1);
    expect((await service.get(escalated.decision_id)).status).toBe('expired');
    const expiries = await log.query({ event_type: 'governance.review', order: 'asc', limit: 10 });
    expect(expiries.total).toBe(2);
  });

  it('writes an expiry once when two replicas both believe they lead (one claim wins)', async () => {
    const pending = new PendingReviews();
    log.subscribe((entry) => pending.observe(entry));
    const escalated = await propose('ESCALATE');
    now = new Date('2026-11-23T13:00:00Z');
    const claims = new LocalClaims(() => now.getTime());
    const [a, b] = [sweeperFor(pending, true, claims), sweeperFor(pending, true, claims)];
    // Both find it due before either has written it.
    const written = await Promise.all([a.sweep(), b.sweep()]);
    expect(written.sort()).toEqual([0, 1]);
    expect((await service.get(escalated.decision_id)).reviews.map((r) => r.data.action)).toEqual(['expire']);
  });

  it('writes nothing on a replica that does not lead', async () => {
    const pending = new PendingReviews();
    log.subscribe((entry) => pending.observe(entry));
    const escalated = await propose('ESCALATE');
    now = new Date('2026-11-23T13:00:00Z');
    expect(await sweeperFor(pending, false).sweep()).toBe(0);
    expect((await service.get(escalated.decision_id)).reviews).toEqual([]);
    expect(pending.size).toBe(1);
  });

  it('does not expire a decision reviewed before its deadline, even if the feed has not said so yet', async () => {
    const pending = new PendingReviews();
    const escalated = await propose('ESCALATE');
    for (const entry of await log.byDecision(escalated.decision_id)) pending.observe(entry);
    await service.review(escalated.decision_id, 'approve', 'reviewer');
    now = new Date('2026-11-23T13:00:00Z');
    expect(await sweeperFor(pending).sweep()).toBe(0);
    expect((await service.get(escalated.decision_id)).status).toBe('approved');
    expect(pending.size).toBe(0);
  });

  it('runs by itself once started, and stops', async () => {
    const pending = new PendingReviews();
    log.subscribe((entry) => pending.observe(entry));
    const escalated = await propose('ESCALATE');
    now = new Date('2026-11-23T13:00:00Z');
    const sweeper = sweeperFor(pending);
    sweeper.start();
    await expect.poll(() => pending.size, { timeout: 5000 }).toBe(0);
    await sweeper.stop();
    expect((await service.get(escalated.decision_id)).reviews.map((r) => r.data.action)).toEqual(['expire']);
  });
});
