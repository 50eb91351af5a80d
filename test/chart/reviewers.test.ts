import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { resolveBinaries } from '../env/binaries.js';
import { eventually, startController } from '../operator/support/operator-env.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { controllerClusterRole, REPO, type KubeObject } from './support/render-chart.js';
import { installChartRbac } from './support/install-chart-rbac.js';
import { governanceObject, lowRiskCapability, OBJECT_PATHS, RBAC_API } from './support/rbac-objects.js';
import { create, serviceAccountToken } from '../env/control-plane-clients.js';

const NAMESPACE = 'arbiter-system';
const DOC = join(REPO, 'docs/reviewers.md');
const API = '/apis/governance.arbiter.dev/v1alpha1';
const SA_GROUPS = (namespace: string) => [
  'system:serviceaccounts',
  `system:serviceaccounts:${namespace}`,
  'system:authenticated',
];

/** The ```lang blocks of docs/reviewers.md, as written. */
async function docBlocks(lang: 'yaml' | 'sh'): Promise<string[]> {
  const text = await readFile(DOC, 'utf8');
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

async function docObjects(): Promise<KubeObject[]> {
  return (await docBlocks('yaml')).flatMap((block) =>
    parseAllDocuments(block).map((doc) => doc.toJS() as KubeObject),
  );
}

/**
 * Reviewers with Kubernetes identities, end to end: the controller (`arbiter serve
 * --kubeconfig`, as the chart's ServiceAccount with the chart's RBAC) on a real
 * kube-apiserver with RBAC, the chart's reviewer and auditor ClusterRoles, and the
 * RoleBindings of docs/reviewers.md as written. Static token users stand for OIDC users
 * (the API server authenticates both; Arbiter sees a username and groups).
 */
describeWithControlPlane(
  'reviewers with Kubernetes identities (TokenReview + SubjectAccessReview)',
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    const tokens: Record<string, string> = {};
    const tokenOf = (namespace: string, name: string) => serviceAccountToken(controlPlane(), namespace, name);
    const as = (who: string) => ({ key: tokens[who] ?? controlPlane().users[who]!.token });
    const propose = async (capability: string) => {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        ...as('planner'),
        body: {
          actor: { id: 'agent-1', type: 'ai-agent' },
          action: { capability, parameters: { service: 'web' } },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { decision_id: string; outcome: string };
    };
    const review = (who: string, id: string, action: 'approve' | 'deny', comment = 'checked') =>
      call(arbiter.url, 'POST', `/api/v1/governance/decisions/${id}/${action}`, {
        ...as(who),
        body: { comment },
      });
    const decision = (who: string, id: string) =>
      call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, as(who));
    const statusOf = async (id: string) =>
      (await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, { key: 'dev-admin-key' })).body
        .audit.status;

    beforeAll(async () => {
      const cp = controlPlane();
      await installCrds(cp);
      for (const name of [NAMESPACE, 'ops', 'agents', 'team-a', 'team-b'])
        await create(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

      // The chart's ServiceAccount and RBAC (controller roles, reviewer and auditor roles).
      const { chart, kubeconfig } = await installChartRbac(cp, NAMESPACE);
      // The docs' objects as written, except their copy of the chart's roles, which must be
      // exactly what the chart renders.
      for (const object of await docObjects()) {
        const rendered = chart.all(object.kind).find((o) => o.metadata.name === object.metadata.name);
        if (rendered) {
          expect(object.rules, `docs/reviewers.md: ${object.metadata.name}`).toEqual(rendered.rules);
          continue;
        }
        await create(cp, OBJECT_PATHS[object.kind]!(object), object);
      }
      expect(controllerClusterRole(chart).rules).toContainEqual({
        apiGroups: ['authorization.k8s.io'],
        resources: ['subjectaccessreviews'],
        verbs: ['create'],
      });

      // review-bot is the docs' reviewer; planner proposes for agent-1 (an ActorGrant binds
      // it) and may review too (so that its own approval is refused for being its own, not
      // for RBAC); nobody is bound to nothing.
      for (const [namespace, name] of [
        ['ops', 'review-bot'],
        ['agents', 'planner'],
        ['agents', 'nobody'],
      ] as const) {
        await create(cp, `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
        tokens[name] = await tokenOf(namespace, name);
      }
      await create(cp, `${RBAC_API}/clusterrolebindings`, {
        metadata: { name: 'planner-reviews-too' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'arbiter-reviewer' },
        subjects: [{ kind: 'ServiceAccount', name: 'planner', namespace: 'agents' }],
      });

      for (const capability of ['deploy.production', 'payments.transfer'])
        await create(cp, `${API}/capabilities`, lowRiskCapability(capability));
      await create(
        cp,
        `${API}/actorgrants`,
        governanceObject('ActorGrant', 'agent-1', {
          actor: {
            id: 'agent-1',
            type: 'ai-agent',
            subjects: [{ kind: 'ServiceAccount', namespace: 'agents', name: 'planner' }],
          },
          grants: [{ capability: 'deploy.production' }, { capability: 'payments.transfer' }],
        }),
      );
      await create(
        cp,
        `${API}/policies`,
        governanceObject('Policy', 'people-decide', {
          rules: [
            { capability: 'deploy.production', outcome: 'ESCALATE' },
            { capability: 'payments.transfer', outcome: 'ESCALATE' },
          ],
        }),
      );

      arbiter = await startController({ kubeconfig, identity: 'reviewers' });
      await eventually(
        'the configuration in the index',
        async () => {
          const res = await call(arbiter.url, 'GET', '/api/v1/actors/agent-1/grants', {
            key: 'dev-admin-key',
          });
          const policies = await call(arbiter.url, 'GET', '/api/v1/policies', { key: 'dev-admin-key' });
          return res.status === 200 && res.body.grants?.length === 2 && policies.body.policies?.length === 1
            ? true
            : undefined;
        },
        30_000,
      );
    }, 180_000);

    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it("approves with a ServiceAccount bound to the chart's arbiter-reviewer, and records its user and groups", async () => {
      const { decision_id: id, outcome } = await propose('deploy.production');
      expect(outcome).toBe('ESCALATE');
      // The whole workflow with the role alone: list, read, approve, the trail, the audit log.
      const list = await call(arbiter.url, 'GET', '/api/v1/governance/decisions?limit=5', as('review-bot'));
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect(list.body.decisions.map((d: { decision_id: string }) => d.decision_id)).toContain(id);
      expect((await decision('review-bot', id)).body.audit.status).toBe('pending');

      const approved = await review('review-bot', id, 'approve', 'looks right');
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.audit.status).toBe('approved');
      expect(approved.body.audit.reviews).toEqual([
        expect.objectContaining({
          action: 'approve',
          reviewer: 'serviceaccount:ops/review-bot',
          reviewer_username: 'system:serviceaccount:ops:review-bot',
          reviewer_groups: SA_GROUPS('ops'),
          comment: 'looks right',
        }),
      ]);
      const entries = await call(
        arbiter.url,
        'GET',
        `/api/v1/audit/log?event_type=governance.review&order=desc&limit=1`,
        as('review-bot'),
      );
      expect(entries.status, JSON.stringify(entries.body)).toBe(200);
      expect(entries.body.entries[0]).toMatchObject({
        decision_id: id,
        data: {
          reviewer: 'serviceaccount:ops/review-bot',
          reviewer_username: 'system:serviceaccount:ops:review-bot',
          reviewer_groups: SA_GROUPS('ops'),
        },
      });
      expect((await call(arbiter.url, 'GET', `/api/v1/audit/log/${id}`, as('review-bot'))).status).toBe(200);
      expect((await call(arbiter.url, 'GET', '/api/v1/audit/verify', as('review-bot'))).body.ok).toBe(true);
      // RBAC grants no scope beyond reading and reviewing.
      const write = await call(arbiter.url, 'POST', '/api/v1/actors/agent-2/grants', {
        ...as('review-bot'),
        body: { capability: 'deploy.production' },
      });
      expect(write.status).toBe(401);
    });

    it('refuses a token without a RoleBinding with 403 (a read of the decision: 404), and changes nothing', async () => {
      const { decision_id: id } = await propose('deploy.production');
      for (const who of ['nobody', 'mallory']) {
        const refused = await review(who, id, 'approve');
        expect(refused.status, JSON.stringify(refused.body)).toBe(403);
        expect(refused.body.error.code).toBe('FORBIDDEN');
        expect(refused.body.error.message).toMatch(
          /RBAC does not let user ".+" approve decisions\.governance\.arbiter\.dev "deploy\.production"/,
        );
        // A decision it may not read is answered as one that does not exist.
        expect((await decision(who, id)).status).toBe(404);
      }
      expect(await statusOf(id)).toBe('pending');
    });

    it('refuses the proposer approving its own decision with 403, though RBAC would let it review', async () => {
      const { decision_id: id } = await propose('deploy.production');
      const own = await review('planner', id, 'approve');
      expect(own.status, JSON.stringify(own.body)).toBe(403);
      expect(own.body.error.message).toContain('"serviceaccount:agents/planner" proposed decision');
      expect(await statusOf(id)).toBe('pending');
      // Someone else's decision it may approve: the refusal was about the proposer.
      const { decision_id: other } = await propose('payments.transfer');
      expect((await review('review-bot', other, 'deny')).status).toBe(200);
      expect((await review('carol', id, 'approve')).status).toBe(200);
    });

    it("limits a reviewer to capabilities by resourceNames, and records a user's groups", async () => {
      const deploy = (await propose('deploy.production')).decision_id;
      const payment = (await propose('payments.transfer')).decision_id;
      const refused = await review('dave', payment, 'approve');
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      const approved = await review('dave', deploy, 'approve');
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.audit.reviews[0]).toMatchObject({
        reviewer: 'kubernetes:dave',
        reviewer_username: 'dave',
        reviewer_groups: ['release-managers', 'system:authenticated'],
      });
      // The docs' check agrees: true for deploy.production, false for payments.transfer.
      const check = (await docBlocks('sh')).filter((block) => block.includes('SubjectAccessReview'));
      expect(check).toHaveLength(1);
      const { kubectl } = resolveBinaries();
      const cp = controlPlane();
      const asWritten = await new Promise<string>((resolve, reject) => {
        execFile(
          'bash',
          [
            '-euo',
            'pipefail',
            '-c',
            `kubectl() { "$KUBECTL" --kubeconfig="$KUBECONFIG_FILE" "$@"; }\n${check[0]}`,
          ],
          { env: { ...process.env, KUBECTL: kubectl, KUBECONFIG_FILE: cp.kubeconfigPath } },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        );
      });
      expect(asWritten).toBe('true\nfalse\n');
    });

    it('authorizes an approval by the approve verb and a deny by deny: a role with one cannot do the other', async () => {
      const cp = controlPlane();
      // Two ServiceAccounts in ops, each bound to a ClusterRole with one review verb only.
      for (const verb of ['approve', 'deny']) {
        const name = `${verb}-only`;
        await create(cp, `${RBAC_API}/clusterroles`, {
          metadata: { name: `arbiter-${name}` },
          rules: [{ apiGroups: ['governance.arbiter.dev'], resources: ['decisions'], verbs: [verb] }],
        });
        await create(cp, '/api/v1/namespaces/ops/serviceaccounts', { metadata: { name } });
        await create(cp, `${RBAC_API}/clusterrolebindings`, {
          metadata: { name: `arbiter-${name}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `arbiter-${name}` },
          subjects: [{ kind: 'ServiceAccount', name, namespace: 'ops' }],
        });
        tokens[name] = await tokenOf('ops', name);
      }
      const toApprove = (await propose('deploy.production')).decision_id;
      const toDeny = (await propose('deploy.production')).decision_id;
      // Each tries the verb it lacks first: 403, naming what RBAC was asked; nothing recorded.
      for (const [who, id, action] of [
        ['approve-only', toDeny, 'deny'],
        ['approve-only', toApprove, 'deny'],
        ['deny-only', toApprove, 'approve'],
        ['deny-only', toDeny, 'approve'],
      ] as const) {
        const refused = await review(who, id, action);
        expect(refused.status, JSON.stringify(refused.body)).toBe(403);
        expect(refused.body.error).toMatchObject({
          code: 'FORBIDDEN',
          message: `"serviceaccount:ops/${who}" lacks the scope governance:review, and RBAC does not let user "system:serviceaccount:ops:${who}" ${action} decisions.governance.arbiter.dev "deploy.production"`,
        });
      }
      expect([await statusOf(toApprove), await statusOf(toDeny)]).toEqual(['pending', 'pending']);
      // Then the verb each holds.
      const approved = await review('approve-only', toApprove, 'approve', 'approver');
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const denied = await review('deny-only', toDeny, 'deny', 'denier');
      expect(denied.status, JSON.stringify(denied.body)).toBe(200);
      expect([await statusOf(toApprove), await statusOf(toDeny)]).toEqual(['approved', 'denied']);
      // The audit log records each review once, by the reviewer that made it.
      const entries = await call(
        arbiter.url,
        'GET',
        '/api/v1/audit/log?event_type=governance.review&order=desc&limit=20',
        { key: 'dev-admin-key' },
      );
      expect(entries.status, JSON.stringify(entries.body)).toBe(200);
      const reviewOf = (who: string, action: string, comment: string) => ({
        action,
        reviewer: `serviceaccount:ops/${who}`,
        reviewer_username: `system:serviceaccount:ops:${who}`,
        reviewer_groups: SA_GROUPS('ops'),
        comment,
      });
      const ours = (entries.body.entries as { decision_id: string; data: unknown }[]).filter((e) =>
        [toApprove, toDeny].includes(e.decision_id),
      );
      expect(ours.map((e) => [e.decision_id, e.data])).toEqual([
        [toDeny, reviewOf('deny-only', 'deny', 'denier')],
        [toApprove, reviewOf('approve-only', 'approve', 'approver')],
      ]);
    });

    it('lets an auditor read decisions and the audit log, and nothing more', async () => {
      const { decision_id: id } = await propose('payments.transfer');
      expect((await decision('erin', id)).status).toBe(200);
      expect((await call(arbiter.url, 'GET', '/api/v1/audit/verify', as('erin'))).status).toBe(200);
      expect((await call(arbiter.url, 'GET', `/api/v1/audit/log/${id}`, as('erin'))).status).toBe(200);
      expect((await review('erin', id, 'approve')).status).toBe(403);
      expect((await review('erin', id, 'deny')).status).toBe(403);
    });

    it('fails closed with 503 while the API server cannot answer, and reviews again once it is back', async () => {
      const { decision_id: id } = await propose('payments.transfer');
      // carol's token is reviewed now (TokenReview results are kept 30 s), her right to
      // approve payments.transfer never was: during the outage only the
      // SubjectAccessReview is missing.
      expect((await decision('carol', id)).status).toBe(200);
      await controlPlane().stopApiServer();
      try {
        const res = await review('carol', id, 'approve');
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        expect(res.body.error).toMatchObject({
          code: 'UNAVAILABLE',
          message: "cannot check the caller's permissions: SubjectAccessReview failed",
        });
      } finally {
        await controlPlane().startApiServer();
      }
      expect(await statusOf(id)).toBe('pending');
      const approved = await review('carol', id, 'approve');
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.audit.reviews[0].reviewer_groups).toEqual(['sre-oncall', 'system:authenticated']);
    });

    it('never logs a token', () => {
      const logs = arbiter.logs.join('\n');
      for (const token of Object.values(tokens)) expect(logs).not.toContain(token);
      for (const user of Object.values(controlPlane().users)) expect(logs).not.toContain(user.token);
    });
  },
  {
    users: {
      carol: { groups: ['sre-oncall'] },
      dave: { groups: ['release-managers'] },
      erin: { groups: ['security-auditors'] },
      mallory: {},
    },
  },
);
