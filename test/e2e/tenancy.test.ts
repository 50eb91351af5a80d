import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { create, serviceAccountToken } from '../env/control-plane-clients.js';
import { eventually } from '../operator/support/operator-env.js';
import { kubectl, kubectlOk, startWebhookController } from '../admission/support/admission-env.js';
import { installChartRbac } from '../chart/support/install-chart-rbac.js';
import { RBAC_API, roleBinding } from '../chart/support/rbac-objects.js';
import { call, KEYS, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';

/** Bounds a wait for a change to reach the index and the statuses: a hang detector only. */
const CHANGE_BOUND_MS = 15_000;
const NAMESPACE = 'arbiter-system';
/** Team A's budget: large enough for the story's calls before the budget step spends the rest. */
const TEAM_A_BUDGET = 200;

/** The platform's part, applied by a cluster admin: the catalogue, the guardrails, two Delegations. */
const PLATFORM = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: report-bot, namespace: team-a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: helper-bot, namespace: team-a}
${[
  ['db.query', 'low'],
  ['db.purge', 'medium'],
  ['db.drop-table', 'high'],
  ['db.restore', 'critical'],
  ['payments.transfer', 'low'],
]
  .map(
    ([name, riskLevel]) => `---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata: {name: ${name!.replace('.', '-')}}
spec: {name: ${name}, riskLevel: ${riskLevel}}
`,
  )
  .join('')}---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata: {name: platform-guardrails}
spec:
  rules:
    - {capability: db.drop-table, outcome: ESCALATE}
    - {capability: db.purge, outcome: DENY}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Delegation
metadata: {name: team-a}
spec:
  namespaces: [team-a]
  capabilities: ["db.*"]
  maxRiskLevel: high
  rateLimit: {maxRequests: ${TEAM_A_BUDGET}, windowSeconds: 3600}
  reviewers: {maxRiskLevel: medium}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Delegation
metadata: {name: team-b}
spec:
  namespaces: [team-b]
  capabilities: ["db.*"]
  maxRiskLevel: high
  reviewers: {maxRiskLevel: medium}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: bot, namespace: team-b}
spec:
  actor: {id: bot, type: ai-agent}
  grants: [{capability: db.query}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: careful, namespace: team-b}
spec:
  rules: [{capability: db.query, outcome: ESCALATE}]
`;

/** team-a binding a ServiceAccount of team-b: never allowed, here applied before any webhook runs. */
const foreignGrant = (name: string) => `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: ${name}, namespace: team-a}
spec:
  actor:
    id: ${name}
    subjects: [{kind: ServiceAccount, namespace: team-b, name: default}]
  grants: [{capability: db.query}]
`;

/** Team A's part, applied by its team admin: two agents and its own rules. */
const TEAM_A = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: report-bot, namespace: team-a}
spec:
  actor:
    id: report-bot
    type: ai-agent
    subjects: [{kind: ServiceAccount, name: report-bot}]
  grants:
    - capability: db.query
    - capability: db.purge
    - capability: db.drop-table
    - capability: payments.transfer   # not delegated
    - capability: db.restore          # riskier than the Delegation's maxRiskLevel
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: helper-bot, namespace: team-a}
spec:
  actor:
    id: helper-bot
    type: ai-agent
    subjects: [{kind: ServiceAccount, name: helper-bot}]
  grants: [{capability: db.query}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: team-rules, namespace: team-a}
spec:
  rules:
    - {capability: db.query, condition: "parameters.env == 'production'", outcome: ESCALATE, priority: 10}
    # However high their priority, these cannot lift the platform's ESCALATE and DENY.
    - {capability: db.drop-table, outcome: ALLOW, priority: 1000}
    - {capability: db.purge, outcome: ALLOW, priority: 1000}
`;

interface Proposed {
  decision_id: string;
  outcome: string;
  reason: string;
}

/**
 * Tenancy as a user meets it (issue #38), one story on a real kube-apiserver with RBAC:
 * Arbiter as the chart's ServiceAccount with the chart's RBAC and its webhooks, kubectl as
 * the platform admin and as team A's admin (impersonated user `admin-a`, a RoleBinding of
 * the chart's team editor in team-a), team A's agents proposing over HTTP with their own
 * ServiceAccount tokens, a team-a reviewer and a team-b auditor with their own tokens.
 * The tests run in order: each step builds on the one before.
 */
describeWithControlPlane(
  'tenancy end to end: two teams, the chart’s RBAC, kubectl and the HTTP API',
  (cp) => {
    let arbiter: ArbiterProcess;
    const tokens: Record<string, string> = {};
    const decisions: Record<string, string> = {};
    /** kubectl as team A's admin: `apply`, or `create` where RBAC should refuse the write itself. */
    const asTeamAdmin = (yaml: string, verb: 'apply' | 'create' = 'apply') =>
      kubectl(cp(), [verb, '--validate=false', '-f', '-'], { as: 'admin-a', stdin: yaml });
    const as = (who: string) => ({ key: tokens[who] ?? cp().users[who]!.token });
    const propose = async (who: string, capability: string, env = 'staging') => {
      const actor = tokens[who] ? `team-a/${who}` : who;
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        ...(tokens[who] ? as(who) : { key: KEYS.admin }),
        body: { actor: { id: actor, type: 'ai-agent' }, action: { capability, parameters: { env } } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as Proposed;
    };
    const evaluationOf = async (decisionId: string) => {
      const res = await call(arbiter.url, 'GET', `/api/v1/audit/log/${decisionId}`, { key: KEYS.admin });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.evaluation as { tier: string | null; authority_check: string };
    };
    const condition = (resource: string, name: string, type: string, reason: string) =>
      eventually(
        `${type} ${reason} on team-a/${name}`,
        async () => {
          const got = await kubectl(cp(), ['-n', 'team-a', 'get', resource, name, '-o', 'json']);
          if (got.code !== 0) return undefined;
          const conditions = (JSON.parse(got.stdout).status?.conditions ?? []) as {
            type: string;
            status: string;
            reason: string;
            message: string;
          }[];
          return conditions.find((c) => c.type === type && c.reason === reason);
        },
        CHANGE_BOUND_MS,
      );
    const review = (who: string, id: string) =>
      call(arbiter.url, 'POST', `/api/v1/governance/decisions/${id}/approve`, {
        ...as(who),
        body: { comment: 'checked' },
      });

    beforeAll(async () => {
      await installCrds(cp());
      await create(cp(), '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NAMESPACE },
      });
      const { kubeconfig } = await installChartRbac(cp(), NAMESPACE);
      await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], { stdin: PLATFORM });
      for (const [namespace, role, user] of [
        ['team-a', 'arbiter-team-editor', 'admin-a'],
        ['team-a', 'arbiter-reviewer', 'lead-a'],
        ['team-b', 'arbiter-auditor', 'auditor-b'],
      ] as const)
        await create(
          cp(),
          `${RBAC_API}/namespaces/${namespace}/rolebindings`,
          roleBinding(namespace, role, user),
        );
      // Created while no webhook runs: the index must still keep it out of use.
      await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], { stdin: foreignGrant('thief') });
      for (const bot of ['report-bot', 'helper-bot'])
        tokens[bot] = await serviceAccountToken(cp(), 'team-a', bot);
      ({ arbiter } = await startWebhookController(cp(), {
        identity: 'arbiter-0',
        kubeconfig,
        extraArgs: ['--admission-owner-clusterrole', 'arbiter'],
      }));
    }, 90_000);

    afterAll(async () => {
      await arbiter?.stop();
      if (arbiter) await removeDir(arbiter.dataDir);
    });

    it("the team admin may not write cluster Policies nor team-b's objects: RBAC refuses", async () => {
      const cluster = await asTeamAdmin(
        `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata: {name: team-a-loosens}
spec: {rules: [{capability: db.purge, outcome: ALLOW}]}
`,
        'create',
      );
      expect(cluster.code).toBe(1);
      expect(cluster.stderr).toContain('User "admin-a" cannot create resource "policies"');
      const teamB = await asTeamAdmin(
        `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: not-ours, namespace: team-b}
spec: {rules: [{capability: db.query, outcome: ALLOW}]}
`,
        'create',
      );
      expect(teamB.code).toBe(1);
      expect(teamB.stderr).toContain('cannot create resource "namespacedpolicies"');
      expect(teamB.stderr).toContain('in the namespace "team-b"');
    });

    it('a grant binding a ServiceAccount of team-b: ignored if it got in (ForeignSubject), refused at apply', async () => {
      const ignored = await condition('namespacedactorgrants', 'thief', 'Ready', 'ForeignSubject');
      expect(ignored.value.status).toBe('False');
      expect((await propose('team-a/thief', 'db.query')).outcome).toBe('DENY');
      const refused = await eventually(
        'the configuration webhook to refuse the foreign grant',
        async () => {
          const result = await asTeamAdmin(foreignGrant('thief-2'));
          return result.code === 1 ? result : undefined;
        },
        CHANGE_BOUND_MS,
      );
      expect(refused.value.stderr).toContain('ForeignSubject: binds ServiceAccount team-b/default');
      // From here on the configuration webhook sees every write.
    });

    it("the team admin applies team A's agents and rules; grants beyond the Delegation get a warning", async () => {
      const applied = await asTeamAdmin(TEAM_A);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(
        'Warning: NamespacedActorGrant team-a/report-bot: Delegation team-a does not let namespace team-a govern',
      );
      await condition('namespacedactorgrants', 'report-bot', 'OutsideDelegation', 'OutsideDelegation');
      await condition('namespacedactorgrants', 'helper-bot', 'Ready', 'Accepted');
      await condition('namespacedpolicies', 'team-rules', 'Ready', 'Accepted');
    });

    it('a namespace ALLOW of any priority leaves a cluster ESCALATE or DENY standing', async () => {
      const escalated = await eventually(
        'team-a/report-bot known to the index',
        async () => {
          const res = await propose('report-bot', 'db.drop-table');
          return res.outcome === 'ESCALATE' ? res : undefined;
        },
        CHANGE_BOUND_MS,
      );
      decisions.clusterTier = escalated.value.decision_id;
      expect((await evaluationOf(decisions.clusterTier)).tier).toBe('cluster');
      const purged = await propose('report-bot', 'db.purge');
      expect(purged.outcome).toBe('DENY');
      expect((await evaluationOf(purged.decision_id)).tier).toBe('cluster');
    });

    it("a namespace ESCALATE tightens the cluster tier's ALLOW", async () => {
      expect((await propose('report-bot', 'db.query', 'staging')).outcome).toBe('ALLOW');
      const production = await propose('report-bot', 'db.query', 'production');
      expect(production.outcome).toBe('ESCALATE');
      expect((await evaluationOf(production.decision_id)).tier).toBe('namespace');
      decisions.namespaceTier = production.decision_id;
    });

    it('a capability outside the Delegation, or riskier than it allows, is DENY though granted', async () => {
      for (const capability of ['payments.transfer', 'db.restore']) {
        const denied = await propose('report-bot', capability);
        expect(denied.outcome, capability).toBe('DENY');
        expect((await evaluationOf(denied.decision_id)).authority_check).toBe('outside_delegation');
      }
    });

    it("a team-a reviewer settles team A's namespace-tier escalation, not a cluster-tier one nor team B's", async () => {
      const teamB = await propose('team-b/bot', 'db.query');
      expect(teamB.outcome).toBe('ESCALATE');
      decisions.teamB = teamB.decision_id;
      const theirs = await review('lead-a', decisions.teamB);
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(403);
      expect(theirs.body.error.message).toContain('neither at cluster scope nor in namespace team-b');
      expect((await review('lead-a', decisions.clusterTier!)).status).toBe(403);
      const ours = await review('lead-a', decisions.namespaceTier!);
      expect(ours.status, JSON.stringify(ours.body)).toBe(200);
      expect(ours.body.audit.reviews[0]).toMatchObject({ reviewer: 'kubernetes:lead-a', action: 'approve' });
    });

    it('a team-b auditor sees nothing of team A: lists, totals, direct reads', async () => {
      const listed = await call(
        arbiter.url,
        'GET',
        '/api/v1/governance/decisions?limit=100',
        as('auditor-b'),
      );
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(listed.body.decisions.map((d: { decision_id: string }) => d.decision_id)).toEqual([
        decisions.teamB,
      ]);
      expect(listed.body.total).toBe(1);
      const log = await call(arbiter.url, 'GET', '/api/v1/audit/log?limit=200', as('auditor-b'));
      // team B's decision and its configuration's entries, nothing else.
      const entries = log.body.entries as { namespace?: string; actor_id: string }[];
      expect(entries.map((e) => e.namespace)).toEqual(entries.map(() => 'team-b'));
      expect(entries.map((e) => e.actor_id)).toContain('team-b/bot');
      expect(JSON.stringify(entries)).not.toContain('team-a');
      expect(log.body.total).toBe(entries.length);
      for (const path of [
        `/api/v1/governance/decisions/${decisions.namespaceTier}`,
        `/api/v1/audit/log/${decisions.clusterTier}`,
      ])
        expect((await call(arbiter.url, 'GET', path, as('auditor-b'))).status, path).toBe(404);
    });

    it("two agents of team-a share its Delegation's budget", async () => {
      expect((await propose('helper-bot', 'db.query')).outcome).toBe('ALLOW');
      // report-bot spends what is left of the namespace's budget...
      let spent: Proposed | undefined;
      for (let i = 0; i < TEAM_A_BUDGET && !spent; i++) {
        const res = await propose('report-bot', 'db.query');
        if (res.outcome !== 'ALLOW') spent = res;
      }
      expect(spent?.outcome).toBe('DENY');
      expect((await evaluationOf(spent!.decision_id)).authority_check).toBe('rate_limited');
      // ...and helper-bot, though its own grant has no limit, has none left either.
      const helper = await propose('helper-bot', 'db.query');
      expect(helper.outcome).toBe('DENY');
      expect(helper.reason).toContain(
        `namespace team-a may propose at most ${TEAM_A_BUDGET} time(s) per 3600 second(s), shared by all its actors`,
      );
    });

    it("deleting team A's Delegation makes its grants authorize nothing: DENY no_delegation", async () => {
      await kubectlOk(cp(), ['delete', 'delegation', 'team-a']);
      const denied = await eventually(
        'no Delegation for team-a',
        async () => {
          const res = await propose('helper-bot', 'db.query');
          const check = (await evaluationOf(res.decision_id)).authority_check;
          return check === 'no_delegation' ? res : undefined;
        },
        CHANGE_BOUND_MS,
      );
      expect(denied.value.outcome).toBe('DENY');
      expect(denied.value.reason).toContain('No Delegation covers namespace team-a');
      expect((await propose('team-b/bot', 'db.query')).outcome).toBe('ESCALATE');
    });
  },
  { users: { 'admin-a': {}, 'lead-a': {}, 'auditor-b': {} } },
);
