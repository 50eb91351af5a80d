import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestDataOf, proposalOf } from '../admission/kubernetes-request.js';
import { configMapRequest, PLANNER } from '../admission/test-requests.js';
import type { AdmissionRequest } from '../admission/admission-review.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { openLog, tempDir } from '../audit/file/test-fixtures.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../engine/index.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import { MemoryOneTimeUses } from '../one-time-uses/index.js';
import type { ActorGrantObject, GrantConstraints, Outcome } from '../model/index.js';
import { DecisionService } from './decision-service.js';
import { InPathDecisions, kubernetesInPathRequest } from './in-path-decisions.js';

function boundGrant(grants: Array<{ capability: string; constraints?: GrantConstraints }>): ActorGrantObject {
  const object = grant('agent-7', 'agent-7', grants);
  return {
    ...object,
    spec: {
      ...object.spec,
      actor: { id: 'agent-7', subjects: [{ kind: 'ServiceAccount', namespace: 'agents', name: 'planner' }] },
    },
  };
}

/** Deleting a ConfigMap gives `onDelete`; creating one named needs-ok gives `onNeedsOk`. */
const worldWhere = (onDelete: Outcome, onNeedsOk: Outcome): IndexSnapshot =>
  buildIndex([
    capability('k8s.configmaps.create'),
    capability('k8s.configmaps.delete'),
    boundGrant([
      {
        capability: 'k8s.configmaps.create',
        constraints: { rateLimit: { maxRequests: 2, windowSeconds: 60 } },
      },
      { capability: 'k8s.configmaps.delete' },
    ]),
    policy('careful', [
      { capability: 'k8s.configmaps.delete', outcome: onDelete },
      {
        capability: 'k8s.configmaps.create',
        condition: "parameters.name == 'needs-ok'",
        outcome: onNeedsOk,
      },
    ]),
  ]);
const WORLD = worldWhere('ESCALATE', 'REQUIRE_CONFIRMATION');

let now = new Date('2026-11-23T12:00:00Z');
let log: FileAuditLog;
let cleanup: () => Promise<void>;
let decisions: InPathDecisions;
let service: DecisionService;

function setUp(snapshot: IndexSnapshot = WORLD, audit: AuditLog = log) {
  const index = { current: () => snapshot };
  const limiter = new MemoryRateLimiter();
  const settings = resolveEngineSettings();
  const clock = () => now;
  const uses = new MemoryOneTimeUses(clock);
  service = new DecisionService({ index, audit, limiter, settings, clock, pendingTtlSeconds: 600, uses });
  decisions = new InPathDecisions({
    index,
    audit,
    limiter,
    settings,
    clock,
    recorder: service.recorder,
    uses,
  });
}

beforeEach(async () => {
  now = new Date('2026-11-23T12:00:00Z');
  const temp = await tempDir();
  cleanup = temp.cleanup;
  log = await openLog(temp.dir);
  setUp();
});
afterEach(async () => {
  await log.close();
  await cleanup();
});

const binding = { username: PLANNER, actorId: 'agent-7', actorType: undefined, source: 'agent-7' };
function decide(request: AdmissionRequest) {
  return decisions.decide(
    kubernetesInPathRequest(proposalOf(request, binding), requestDataOf(request), request.dryRun === true),
  );
}
const deleteRequest = (overrides: Partial<AdmissionRequest> = {}) =>
  configMapRequest({ operation: 'DELETE', object: null, ...overrides });

async function entries() {
  return (await log.query({ order: 'asc', limit: 200 })).entries;
}

describe('InPathDecisions, for Kubernetes API requests', () => {
  it('records an allowed request with the Kubernetes request in its trail', async () => {
    const verdict = await decide(configMapRequest());
    expect(verdict).toMatchObject({ outcome: 'ALLOW', expiresAt: undefined, warnings: [] });
    const [entry] = await entries();
    expect(entry).toMatchObject({
      event_type: 'governance.decision',
      actor_id: 'agent-7',
      capability: 'k8s.configmaps.create',
      decision_id: verdict.decisionId,
    });
    expect(entry!.data).toMatchObject({
      source: 'admission',
      principal: `kubernetes:${PLANNER}`,
      kubernetes: {
        uid: 'a1b2c3',
        username: PLANNER,
        operation: 'create',
        resource: 'configmaps',
        namespace: 'agents-sandbox',
        name: 'settings',
      },
    });
  });

  it('lets an approved ESCALATE through once for the same request, audits that use, then decides anew', async () => {
    const first = await decide(deleteRequest());
    expect(first).toMatchObject({ outcome: 'ESCALATE', expiresAt: '2026-11-23T12:10:00.000Z' });
    // Retried before any approval: pending again, a new decision.
    const unapproved = await decide(deleteRequest({ uid: 'retry-0' }));
    expect(unapproved.outcome).toBe('ESCALATE');
    const approval = await service.review(first.decisionId!, 'approve', 'reviewer-key');
    expect(approval.confirmation_token).toBeUndefined();
    now = new Date('2026-11-23T12:05:00Z');
    const retry = await decide(deleteRequest({ uid: 'retry-1' }));
    expect(retry).toMatchObject({ outcome: 'ALLOW', approvalOf: first.decisionId });
    expect(retry.reason).toMatch(new RegExp(`^approved by reviewer-key \\(decision ${first.decisionId}\\)`));
    const record = await service.get(first.decisionId!);
    expect(record.reviews.map((r) => r.data.action)).toEqual(['approve', 'confirmation_used']);
    expect((await service.get(retry.decisionId!)).data.confirmation_of).toBe(first.decisionId);
    const third = await decide(deleteRequest({ uid: 'retry-2' }));
    expect(third.outcome).toBe('ESCALATE');
    expect(third.decisionId).not.toBe(first.decisionId);
  });

  it('does not let an approval cover another request, another identity, or a request past the TTL', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    expect((await decide(deleteRequest({ name: 'other' }))).outcome).toBe('ESCALATE');
    const otherUser = deleteRequest({ userInfo: { username: 'system:serviceaccount:agents:other' } });
    const otherDecision = await decisions.decide(
      kubernetesInPathRequest(proposalOf(otherUser, binding), requestDataOf(otherUser), false),
    );
    expect(otherDecision.outcome).toBe('ESCALATE');
    now = new Date('2026-11-23T12:10:00Z'); // the pending TTL (600 s) has run out
    expect((await decide(deleteRequest())).outcome).toBe('ESCALATE');
  });

  it('never lifts a DENY, and a denied decision lets nothing through', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'deny', 'reviewer-key');
    expect((await decide(deleteRequest())).outcome).toBe('ESCALATE');
    const unbound = configMapRequest({ resource: { group: '', version: 'v1', resource: 'secrets' } });
    expect((await decide(unbound)).outcome).toBe('DENY');
  });

  it('approves a REQUIRE_CONFIRMATION by retrying the request, without a token', async () => {
    const first = await decide(configMapRequest({ name: 'needs-ok' }));
    expect(first.outcome).toBe('REQUIRE_CONFIRMATION');
    const approved = await service.review(first.decisionId!, 'approve', 'reviewer-key');
    expect(approved.confirmation_token).toBeUndefined();
    expect((await decide(configMapRequest({ name: 'needs-ok', uid: 'again' }))).outcome).toBe('ALLOW');
  });

  it('answers a dry run as the real request, but records, uses and counts nothing', async () => {
    // Rate limit 2 per minute: dry runs spend none of it.
    for (let i = 0; i < 3; i++)
      expect((await decide(configMapRequest({ dryRun: true }))).outcome).toBe('ALLOW');
    const dry = await decide(deleteRequest({ dryRun: true }));
    expect(dry).toMatchObject({ outcome: 'ESCALATE', decisionId: undefined });
    expect(await entries()).toEqual([]);
    expect((await decide(configMapRequest())).outcome).toBe('ALLOW');
    expect((await decide(configMapRequest())).outcome).toBe('ALLOW');
    expect((await decide(configMapRequest({ dryRun: true }))).outcome).toBe('DENY');
    expect((await decide(configMapRequest())).outcome).toBe('DENY');

    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    const before = (await entries()).length;
    const dryRetry = await decide(deleteRequest({ dryRun: true }));
    expect(dryRetry).toMatchObject({ outcome: 'ALLOW', decisionId: undefined, approvalOf: first.decisionId });
    expect(await entries()).toHaveLength(before);
    // The approval is still there for the real retry.
    expect((await decide(deleteRequest())).outcome).toBe('ALLOW');
  });

  it('never lifts a DENY the configuration now gives, and keeps the approval for later', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    setUp(worldWhere('DENY', 'REQUIRE_CONFIRMATION'));
    expect(await decide(deleteRequest({ uid: 'retry-1' }))).toMatchObject({
      outcome: 'DENY',
      approvalOf: undefined,
    });
    expect((await service.get(first.decisionId!)).reviews.map((r) => r.data.action)).toEqual(['approve']);
    setUp();
    expect((await decide(deleteRequest({ uid: 'retry-2' }))).outcome).toBe('ALLOW');
  });

  it('does not let an approved REQUIRE_CONFIRMATION cover the ESCALATE the request now gets', async () => {
    const first = await decide(configMapRequest({ name: 'needs-ok' }));
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    setUp(worldWhere('ESCALATE', 'ESCALATE'));
    expect((await decide(configMapRequest({ name: 'needs-ok', uid: 'again' }))).outcome).toBe('ESCALATE');
  });

  it('lets only one of two concurrent retries use an approval', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    const retries = await Promise.all([
      decide(deleteRequest({ uid: 'retry-1' })),
      decide(deleteRequest({ uid: 'retry-2' })),
    ]);
    expect(retries.map((v) => v.outcome).sort()).toEqual(['ALLOW', 'ESCALATE']);
    const refused = retries.find((v) => v.outcome === 'ESCALATE')!;
    expect(refused.reason).toMatch(
      new RegExp(`^the approval of decision ${first.decisionId} was already used; `),
    );
    const record = await service.get(first.decisionId!);
    expect(record.reviews.map((r) => r.data.action)).toEqual(['approve', 'confirmation_used']);
  });

  it('tells a retry after the use that the approval was already used, and records it as pending anew', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    expect((await decide(deleteRequest({ uid: 'retry-1' }))).outcome).toBe('ALLOW');
    const again = await decide(deleteRequest({ uid: 'retry-2' }));
    expect(again.outcome).toBe('ESCALATE');
    expect(again.reason).toMatch(
      new RegExp(`^the approval of decision ${first.decisionId} was already used; `),
    );
    expect((await service.get(again.decisionId!)).decision.reason).toBe(again.reason);
    // An approval that expired is not named: it could not have been used anyway.
    now = new Date('2026-11-23T12:10:00Z');
    expect((await decide(deleteRequest({ uid: 'retry-3' }))).reason).not.toContain('already used');
  });

  it('fails closed when the use of an approval cannot be recorded, and the approval stays usable', async () => {
    const first = await decide(deleteRequest());
    await service.review(first.decisionId!, 'approve', 'reviewer-key');
    let refuse = true;
    const flaky: AuditLog = Object.create(log) as AuditLog;
    flaky.append = (event) =>
      refuse && event.data.action === 'confirmation_used'
        ? Promise.reject(new Error('audit log unavailable'))
        : log.append(event);
    setUp(WORLD, flaky);
    await expect(decide(deleteRequest({ uid: 'retry-1' }))).rejects.toThrow('audit log unavailable');
    refuse = false;
    expect(await decide(deleteRequest({ uid: 'retry-2' }))).toMatchObject({
      outcome: 'ALLOW',
      approvalOf: first.decisionId,
    });
  });
});
