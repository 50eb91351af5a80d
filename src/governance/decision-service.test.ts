import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { openLog, tempDir } from '../audit/file/test-fixtures.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../engine/index.js';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import type { Outcome } from '../model/index.js';
import { DecisionService } from './decision-service.js';

/** files.write granted to agent-1; a policy gives the outcome asked for. */
const worldDeciding = (outcome: Outcome): IndexSnapshot =>
  buildIndex([
    capability('files.write'),
    grant('agent-1-files', 'agent-1', [{ capability: 'files.write' }]),
    policy('gate', [{ capability: 'files.write', outcome }]),
  ]);

let now: Date;
let snapshot: IndexSnapshot;
let log: FileAuditLog;
let cleanup: () => Promise<void>;
let service: DecisionService;
const write = (context?: Parameters<typeof proposal>[3]) =>
  proposal('files.write', { path: '/a' }, {}, context);

beforeEach(async () => {
  now = new Date('2026-11-23T12:00:00Z');
  snapshot = worldDeciding('ESCALATE');
  const temp = await tempDir();
  cleanup = temp.cleanup;
  log = await openLog(temp.dir);
  service = new DecisionService({
    index: { current: () => snapshot },
    audit: log,
    limiter: new MemoryRateLimiter(),
    settings: resolveEngineSettings(),
    clock: () => now,
    pendingTtlSeconds: 600,
  });
});
afterEach(async () => {
  await log.close();
  await cleanup();
});

describe('DecisionService: pending decisions', () => {
  it('an ESCALATE decision is pending until its TTL, then expired; reviewing it then records the expiry and refuses', async () => {
    const decision = await service.propose(write(), 'key');
    expect((await service.get(decision.decision_id)).status).toBe('pending');
    now = new Date('2026-11-23T12:09:59.999Z');
    expect((await service.get(decision.decision_id)).status).toBe('pending');
    now = new Date('2026-11-23T12:10:00Z');
    expect((await service.get(decision.decision_id)).status).toBe('expired');
    await expect(service.review(decision.decision_id, 'approve', 'reviewer')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('already expired'),
    });
    const record = await service.get(decision.decision_id);
    expect(record.reviews.map((r) => [r.data.action, r.data.reviewer])).toEqual([['expire', 'arbiter']]);
    // Once recorded, the expiry is not recorded twice.
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
    });
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
