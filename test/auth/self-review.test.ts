import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { proposalOf, requestDataOf } from '../../src/admission/kubernetes-request.js';
import { configMapRequest, PLANNER } from '../../src/admission/test-requests.js';
import type { FileAuditLog } from '../../src/audit/file/file-audit-log.js';
import { openLog, tempDir } from '../../src/audit/file/test-fixtures.js';
import { kubernetesPrincipal, proposerNames, type Principal } from '../../src/auth/index.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../../src/engine/index.js';
import { capability, grant, policy, proposal } from '../../src/engine/test-fixtures.js';
import { DecisionService, type Reviewer } from '../../src/governance/decision-service.js';
import { InPathDecisions, kubernetesInPathRequest } from '../../src/governance/in-path-decisions.js';
import { buildIndex } from '../../src/index/index.js';
import { MemoryOneTimeUses } from '../../src/one-time-uses/index.js';

/**
 * Four eyes: whoever proposed a decision may not approve it, under whichever name the
 * decision recorded them (an API key, a ServiceAccount through the API, a Kubernetes user
 * through the admission webhook). In process, against the real file audit log: the names
 * auth/ gives principals must match those governance/ records.
 */
const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:agents', 'system:authenticated'];
const plannerUser = { username: PLANNER, groups: SA_GROUPS };

const WORLD = buildIndex([
  capability('files.write'),
  capability('k8s.configmaps.create'),
  grant('agent-1', 'agent-1', [{ capability: 'files.write' }]),
  grant('agent-7', 'agent-7', [{ capability: 'k8s.configmaps.create' }]),
  policy('gate', [
    { capability: 'files.write', outcome: 'ESCALATE' },
    { capability: 'k8s.configmaps.create', outcome: 'ESCALATE' },
  ]),
]);

const reviewerOf = (principal: Principal): Reviewer => ({
  name: principal.name,
  proposesAs: proposerNames(principal),
  ...(principal.kubernetes ? { kubernetes: principal.kubernetes } : {}),
});

let log: FileAuditLog;
let cleanup: () => Promise<void>;
let service: DecisionService;
let admission: InPathDecisions;

beforeEach(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  log = await openLog(temp.dir);
  const deps = {
    index: { current: () => WORLD },
    audit: log,
    limiter: new MemoryRateLimiter(),
    settings: resolveEngineSettings(),
    clock: () => new Date('2026-11-23T12:00:00Z'),
  };
  const uses = new MemoryOneTimeUses(deps.clock);
  service = new DecisionService({ ...deps, pendingTtlSeconds: 600, uses });
  admission = new InPathDecisions({ ...deps, recorder: service.recorder, uses });
});
afterEach(async () => {
  await log.close();
  await cleanup();
});

const viaApi = async (principal: string) =>
  (await service.propose(proposal('files.write', { path: '/a' }), principal)).decision_id;

describe('a reviewer may not approve what they proposed', () => {
  it('an API key: 403 for its own decision, which it may still withdraw by a deny', async () => {
    const own = await viaApi('ops');
    await expect(service.review(own, 'approve', 'ops')).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: `"ops" proposed decision ${own} and may not approve it; another reviewer must`,
    });
    expect((await service.get(own)).reviews).toEqual([]);
    expect((await service.review(own, 'deny', 'ops')).record.status).toBe('denied');
    const other = await viaApi('ops');
    expect((await service.review(other, 'approve', 'reviewer')).record.status).toBe('approved');
  });

  it('a ServiceAccount that proposed through the API, reviewing by RBAC', async () => {
    const reviewer = reviewerOf(kubernetesPrincipal(plannerUser, undefined));
    const own = await viaApi('serviceaccount:agents/planner');
    await expect(service.review(own, 'approve', reviewer)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const someoneElses = await viaApi('agent-key');
    expect((await service.review(someoneElses, 'approve', reviewer)).record.status).toBe('approved');
  });

  it('a Kubernetes user whose request the admission webhook escalated', async () => {
    const request = configMapRequest();
    const binding = { username: PLANNER, actorId: 'agent-7', actorType: undefined, source: 'agent-7' };
    const verdict = await admission.decide(
      kubernetesInPathRequest(proposalOf(request, binding), requestDataOf(request), false),
    );
    expect(verdict.outcome).toBe('ESCALATE');
    const id = verdict.decisionId!;
    const planner = reviewerOf(kubernetesPrincipal(plannerUser, undefined));
    await expect(service.review(id, 'approve', planner)).rejects.toMatchObject({ code: 'FORBIDDEN' });

    const alice = reviewerOf(kubernetesPrincipal({ username: 'alice', groups: ['reviewers'] }, undefined));
    const { record } = await service.review(id, 'approve', alice, 'fine');
    expect(record.status).toBe('approved');
    expect(record.reviews.map((r) => r.data)).toEqual([
      {
        action: 'approve',
        reviewer: 'kubernetes:alice',
        reviewer_username: 'alice',
        reviewer_groups: ['reviewers'],
        comment: 'fine',
      },
    ]);
  });

  it('records no Kubernetes identity for an API key', async () => {
    const { record } = await service.review(await viaApi('ops'), 'approve', 'reviewer');
    expect(record.reviews[0]!.data).toEqual({ action: 'approve', reviewer: 'reviewer' });
  });
});
