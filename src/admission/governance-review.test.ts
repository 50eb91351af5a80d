import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdmissionRequest } from './admission-review.js';
import { reviewGovernedRequest } from './governance-review.js';
import { governedWorld, type GovernedWorld } from './test-governance.js';
import { configMapRequest, PLANNER } from './test-requests.js';

/** The governance webhook against the real index, engine and file audit log (see test-governance.ts). */
describe('reviewGovernedRequest', () => {
  let world: GovernedWorld;
  beforeEach(async () => {
    world = await governedWorld(new Set(['kube-system', 'arbiter-system']));
  });
  afterEach(async () => {
    await world.close();
  });

  const review = (request: AdmissionRequest) => reviewGovernedRequest(request, world.deps);
  const deleteRequest = (overrides: Partial<AdmissionRequest> = {}) =>
    configMapRequest({ operation: 'DELETE', object: null, ...overrides });
  const onlyDecisionId = async () => {
    const entries = await world.entries();
    expect(entries).toHaveLength(1);
    return entries[0]!.decision_id!;
  };

  describe('who is not governed passes at once and is recorded nowhere', () => {
    it.each([
      ['an identity bound to no actor', configMapRequest({ userInfo: { username: 'alice' } })],
      ['a request without a username', configMapRequest({ userInfo: {} })],
      ['a bound identity in an exempt namespace', configMapRequest({ namespace: 'kube-system' })],
      ["a bound identity in Arbiter's own namespace", deleteRequest({ namespace: 'arbiter-system' })],
    ])('%s', async (_name, request) => {
      expect(await review({ ...request, uid: 'review-9' })).toEqual({
        response: { uid: 'review-9', allowed: true },
        outcome: 'not_governed',
      });
      expect(await world.entries()).toEqual([]);
    });
  });

  it('governs a bound identity in any other namespace, and a cluster-scoped request', async () => {
    expect((await review(configMapRequest({ namespace: 'agents-sandbox' }))).outcome).toBe('ALLOW');
    const namespaceCreate = configMapRequest({
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: undefined,
      name: 'new-one',
    });
    expect(await review(namespaceCreate)).toMatchObject({
      response: { allowed: false },
      outcome: 'DENY',
    });
    expect((await world.entries()).map((e) => e.capability)).toEqual([
      'k8s.configmaps.create',
      'k8s.namespaces.create',
    ]);
  });

  it('allows what the bound actor may do, echoing the uid, and records the decision with the request', async () => {
    const result = await review(configMapRequest({ uid: 'review-1', dryRun: undefined }));
    expect(result).toEqual({ response: { uid: 'review-1', allowed: true }, outcome: 'ALLOW' });
    const [entry] = await world.entries();
    expect(entry).toMatchObject({
      event_type: 'governance.decision',
      actor_id: 'agent-7',
      capability: 'k8s.configmaps.create',
      outcome: 'ALLOW',
    });
    expect(entry!.data).toMatchObject({
      source: 'admission',
      principal: `kubernetes:${PLANNER}`,
      request: {
        actor: { id: 'agent-7', type: 'ai-agent' },
        action: { parameters: { namespace: 'agents-sandbox', name: 'settings', dry_run: false } },
      },
      kubernetes: { uid: 'review-1', username: PLANNER, operation: 'create', resource: 'configmaps' },
    });
  });

  it.each([
    [
      'a policy',
      configMapRequest({ name: 'forbidden' }),
      'Arbiter denied k8s.configmaps.create for actor agent-7: Denied by policy careful (rule 2, priority 0).',
    ],
    [
      'a missing grant',
      configMapRequest({ resource: { group: '', version: 'v1', resource: 'secrets' } }),
      'Arbiter denied k8s.secrets.create for actor agent-7: Actor agent-7 has no grant for capability k8s.secrets.create.',
    ],
  ])(
    'refuses what %s denies with 403, the reason and the recorded decision',
    async (_name, request, text) => {
      const result = await review({ ...request, uid: 'review-2' });
      const decisionId = await onlyDecisionId();
      expect(result).toEqual({
        response: {
          uid: 'review-2',
          allowed: false,
          status: { code: 403, message: `${text} (decision ${decisionId})` },
        },
        outcome: 'DENY',
      });
    },
  );

  it('refuses an escalated request, telling how to get it approved and what warn-mode policies say', async () => {
    const result = await review(deleteRequest({ uid: 'review-3' }));
    const decisionId = await onlyDecisionId();
    expect(result).toEqual({
      response: {
        uid: 'review-3',
        allowed: false,
        status: {
          code: 403,
          message:
            'Arbiter: k8s.configmaps.delete for actor agent-7 needs review (ESCALATE): Escalated for review by ' +
            `policy careful (rule 0, priority 0). (decision ${decisionId}). It is pending review until ` +
            '2026-11-23T12:10:00.000Z: once a reviewer approves it ' +
            `(POST /api/v1/governance/decisions/${decisionId}/approve), retry the same request once.`,
        },
        warnings: ['policy trial (enforcementAction warn), rule 1, would have decided DENY'],
      },
      outcome: 'ESCALATE',
    });
  });

  it('refuses a request needing confirmation, naming that outcome', async () => {
    const result = await review(configMapRequest({ name: 'needs-ok' }));
    const decisionId = await onlyDecisionId();
    expect(result.outcome).toBe('REQUIRE_CONFIRMATION');
    expect(result.response.status).toEqual({
      code: 403,
      message:
        'Arbiter: k8s.configmaps.create for actor agent-7 needs review (REQUIRE_CONFIRMATION): Confirmation ' +
        `required by policy careful (rule 1, priority 0). (decision ${decisionId}). It is pending review until ` +
        '2026-11-23T12:10:00.000Z: once a reviewer approves it ' +
        `(POST /api/v1/governance/decisions/${decisionId}/approve), retry the same request once.`,
    });
    expect(result.response).not.toHaveProperty('warnings');
  });

  it('allows with the warnings of warn-mode policies, which kubectl prints', async () => {
    expect(await review(configMapRequest({ operation: 'UPDATE' }))).toEqual({
      response: {
        uid: 'a1b2c3',
        allowed: true,
        warnings: ['policy trial (enforcementAction warn), rule 0, would have decided DENY'],
      },
      outcome: 'ALLOW',
    });
  });

  it('lets the same request through once after a reviewer approved it', async () => {
    await review(deleteRequest());
    const decisionId = await onlyDecisionId();
    await world.service.review(decisionId, 'approve', 'reviewer-key');
    const retry = await review(deleteRequest({ uid: 'retry-1' }));
    expect(retry.outcome).toBe('ALLOW');
    expect(retry.response).toMatchObject({ uid: 'retry-1', allowed: true });
    expect(retry.response).not.toHaveProperty('status');
    expect((await review(deleteRequest({ uid: 'retry-2' }))).outcome).toBe('ESCALATE');
  });

  describe('a dry run (kubectl --dry-run=server)', () => {
    it('is answered like the real request, but records nothing', async () => {
      const denied = await review(configMapRequest({ name: 'forbidden', dryRun: true }));
      expect(denied).toEqual({
        response: {
          uid: 'a1b2c3',
          allowed: false,
          status: {
            code: 403,
            message:
              'Arbiter denied k8s.configmaps.create for actor agent-7: Denied by policy careful (rule 2, ' +
              'priority 0). (dry run: no decision was recorded)',
          },
        },
        outcome: 'DENY',
      });
      expect((await review(configMapRequest({ dryRun: true }))).outcome).toBe('ALLOW');
      expect(await world.entries()).toEqual([]);
    });

    it('of an escalated request says the real one would wait for a reviewer', async () => {
      const result = await review(deleteRequest({ dryRun: true }));
      expect(result.outcome).toBe('ESCALATE');
      expect(result.response.status?.message).toBe(
        'Arbiter: k8s.configmaps.delete for actor agent-7 needs review (ESCALATE): Escalated for review by ' +
          'policy careful (rule 0, priority 0). (dry run: no decision was recorded). The real request would ' +
          'wait for a reviewer.',
      );
      expect(await world.entries()).toEqual([]);
    });
  });
});
