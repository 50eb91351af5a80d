import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { create } from '../env/control-plane-clients.js';
import { eventually, startController } from '../operator/support/operator-env.js';
import { readStreamUntil } from '../support/read-event-stream.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { installChartRbac } from './support/install-chart-rbac.js';
import { governanceObject, lowRiskCapability, RBAC_API, roleBinding } from './support/rbac-objects.js';

const NAMESPACE = 'arbiter-system';
const API = '/apis/governance.arbiter.dev/v1alpha1';

interface Listed {
  decisions: { decision_id: string; audit: { actor_id: string } }[];
  total: number;
  cursor: string | null;
}

/**
 * Review and visibility per namespace (issue #38), end to end: `arbiter serve --kubeconfig`
 * as the chart's ServiceAccount on a real kube-apiserver with RBAC, the chart's reviewer
 * and auditor ClusterRoles bound by RoleBindings in one namespace, and an API key limited
 * to a namespace. Actors `team-a/bot` and `team-b/bot` belong to their namespaces by
 * their ids; cluster ActorGrants let them propose today, before the index fills the
 * namespaced kinds.
 */
describeWithControlPlane(
  'review and visibility per namespace (SubjectAccessReview in the actor’s namespace)',
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    const as = (who: string) => ({ key: controlPlane().users[who]?.token ?? who });
    const admin = { key: 'dev-admin-key' };
    const ids: Record<'a' | 'b' | 'cluster', string[]> = { a: [], b: [], cluster: [] };
    const propose = async (actor: string) => {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        ...admin,
        body: {
          actor: { id: actor, type: 'ai-agent' },
          action: { capability: 'deploy.production', parameters: {} },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.outcome).toBe('ESCALATE');
      return res.body.decision_id as string;
    };
    const list = async (who: string, query = 'limit=100') => {
      const res = await call(arbiter.url, 'GET', `/api/v1/governance/decisions?${query}`, as(who));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as Listed;
    };
    /** Every decision id a caller is shown, page by page, and the totals each page gave. */
    const listAll = async (who: string, limit: number) => {
      const seen: string[] = [];
      const totals = new Set<number>();
      let cursor: string | null = null;
      do {
        const page: Listed = await list(
          who,
          `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.decisions.length).toBeLessThanOrEqual(limit);
        seen.push(...page.decisions.map((d) => d.decision_id));
        totals.add(page.total);
        cursor = page.cursor;
      } while (cursor);
      return { seen, totals: [...totals] };
    };

    beforeAll(async () => {
      const cp = controlPlane();
      await installCrds(cp);
      for (const name of [NAMESPACE, 'team-a', 'team-b'])
        await create(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      const { kubeconfig } = await installChartRbac(cp, NAMESPACE);
      // The chart's ClusterRoles, granted in one namespace only.
      await create(
        cp,
        `${RBAC_API}/namespaces/team-a/rolebindings`,
        roleBinding('team-a', 'arbiter-reviewer', 'lead-a'),
      );
      await create(
        cp,
        `${RBAC_API}/namespaces/team-b/rolebindings`,
        roleBinding('team-b', 'arbiter-auditor', 'auditor-b'),
      );
      await create(
        cp,
        `${RBAC_API}/namespaces/team-a/rolebindings`,
        roleBinding('team-a', 'arbiter-team-editor', 'editor-a'),
      );
      await create(cp, `${RBAC_API}/clusterrolebindings`, {
        metadata: { name: 'auditor-all' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'arbiter-auditor' },
        subjects: [{ kind: 'User', name: 'auditor-all', apiGroup: 'rbac.authorization.k8s.io' }],
      });

      for (const capability of ['deploy.production', 'deploy.staging'])
        await create(cp, `${API}/capabilities`, lowRiskCapability(capability));
      for (const actor of ['team-a/bot', 'team-b/bot', 'agent-1'])
        await create(
          cp,
          `${API}/actorgrants`,
          governanceObject('ActorGrant', actor.replace('/', '-'), {
            actor: { id: actor, type: 'ai-agent' },
            grants: [{ capability: 'deploy.production' }, { capability: 'deploy.staging' }],
          }),
        );
      await create(
        cp,
        `${API}/policies`,
        governanceObject('Policy', 'people-decide', {
          rules: [{ capability: 'deploy.production', outcome: 'ESCALATE' }],
        }),
      );

      const keys = join(cp.dir, 'namespace-keys.yaml');
      await writeFile(
        keys,
        [
          'keys:',
          '  - name: admin',
          '    key: dev-admin-key',
          '    scopes: [admin]',
          '  - name: team-a-ci',
          '    key: team-a-ci-key',
          '    scopes: [governance:propose, governance:read, governance:review, audit:read, policies:manage]',
          '    namespaces: [team-a]',
          '',
        ].join('\n'),
      );
      arbiter = await startController({ kubeconfig, identity: 'namespace-visibility', apiKeys: keys });
      await eventually(
        'the configuration in the index',
        async () => {
          const res = await call(arbiter.url, 'GET', '/api/v1/actors/team-b%2Fbot/grants', admin);
          const policies = await call(arbiter.url, 'GET', '/api/v1/policies', admin);
          return res.body.grants?.length === 2 && policies.body.policies?.length === 1 ? true : undefined;
        },
        30_000,
      );
      // Three of team A, two of team B, two cluster actor's: enough for pages of two.
      for (let i = 0; i < 3; i++) ids.a.push(await propose('team-a/bot'));
      for (let i = 0; i < 2; i++) ids.b.push(await propose('team-b/bot'));
      for (let i = 0; i < 2; i++) ids.cluster.push(await propose('agent-1'));
    }, 180_000);

    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it("shows a team-b auditor none of team A's decisions: lists, totals, pages and direct reads", async () => {
      const everything = await list('auditor-b');
      expect(everything.decisions.map((d) => d.decision_id).sort()).toEqual([...ids.b].sort());
      expect(everything.total).toBe(2);
      // Paged by one: the same two, every page counting exactly the visible ones.
      const paged = await listAll('auditor-b', 1);
      expect(paged.seen).toEqual(everything.decisions.map((d) => d.decision_id));
      expect(paged.totals).toEqual([2]);
      // A direct read of team A's decision (or a cluster actor's) is as of one that does not exist.
      for (const id of [ids.a[0]!, ids.cluster[0]!]) {
        for (const path of [`/api/v1/governance/decisions/${id}`, `/api/v1/audit/log/${id}`]) {
          const res = await call(arbiter.url, 'GET', path, as('auditor-b'));
          expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(404);
          expect(res.body.error.code).toBe('NOT_FOUND');
        }
      }
      expect(
        (await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${ids.b[0]}`, as('auditor-b'))).status,
      ).toBe(200);
      // The audit log: team B's decisions only, and their total.
      const log = await call(
        arbiter.url,
        'GET',
        '/api/v1/audit/log?event_type=governance.decision&limit=100',
        as('auditor-b'),
      );
      expect(log.status, JSON.stringify(log.body)).toBe(200);
      expect(log.body.entries.map((e: { decision_id: string }) => e.decision_id).sort()).toEqual(
        [...ids.b].sort(),
      );
      expect(log.body.total).toBe(2);
      // Every entry it is shown is team B's (no configuration entry of the cluster either).
      const all = await call(arbiter.url, 'GET', '/api/v1/audit/log?limit=200', as('auditor-b'));
      expect(all.body.entries.map((e: { actor_id: string }) => e.actor_id)).toEqual([
        'team-b/bot',
        'team-b/bot',
      ]);
      expect(all.body.total).toBe(2);
      const events = await call(arbiter.url, 'GET', '/api/v1/audit/events?limit=200', as('auditor-b'));
      expect(events.body.total).toBe(2);
      // The pending queue too.
      const pending = await call(arbiter.url, 'GET', '/api/v1/governance/pending?limit=100', as('auditor-b'));
      expect(pending.status, JSON.stringify(pending.body)).toBe(200);
      expect(pending.body.decisions.map((d: { decision_id: string }) => d.decision_id).sort()).toEqual(
        [...ids.b].sort(),
      );
      expect(pending.body.total).toBe(2);
      // What is about the whole log needs cluster scope.
      expect((await call(arbiter.url, 'GET', '/api/v1/audit/verify', as('auditor-b'))).status).toBe(403);
    });

    it('shows a cluster auditor everything, as before', async () => {
      const everything = await list('auditor-all');
      expect(everything.decisions.map((d) => d.decision_id).sort()).toEqual(
        [...ids.a, ...ids.b, ...ids.cluster].sort(),
      );
      expect(everything.total).toBe(7);
      expect(
        (await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${ids.a[0]}`, as('auditor-all')))
          .status,
      ).toBe(200);
    });

    it('streams a team-b auditor only team B’s entries', async () => {
      const controller = new AbortController();
      const response = await fetch(`${arbiter.url}/api/v1/audit/events`, {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${as('auditor-b').key}` },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const a = await propose('team-a/bot');
      const b = await propose('team-b/bot');
      ids.a.push(a);
      ids.b.push(b);
      const received = await readStreamUntil(response, controller, (text) => text.includes(b));
      expect(received).toContain(b);
      // Entries keep their order, so team A's earlier decision would have come first.
      expect(received).not.toContain(a);
      expect(received).not.toContain('team-a/bot');
    });

    it("lets a team-a RoleBinding reviewer read team A's decisions but not settle a cluster-tier escalation, nor team B's", async () => {
      const seen = await list('lead-a');
      expect(seen.decisions.every((d) => d.audit.actor_id === 'team-a/bot')).toBe(true);
      expect(seen.total).toBe(ids.a.length);
      // The cluster Policy escalated team A's decision: only cluster reviewers settle it.
      const own = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${ids.a[0]}/approve`, {
        ...as('lead-a'),
        body: { comment: 'mine?' },
      });
      expect(own.status, JSON.stringify(own.body)).toBe(403);
      expect(own.body.error.message).toContain(
        'RBAC does not let user "lead-a" approve decisions.governance.arbiter.dev "deploy.production"',
      );
      const other = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${ids.b[0]}/deny`, {
        ...as('lead-a'),
        body: { comment: 'theirs' },
      });
      expect(other.status, JSON.stringify(other.body)).toBe(403);
      const statuses = await Promise.all(
        [ids.a[0], ids.b[0]].map(
          async (id) =>
            (await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, admin)).body.audit.status,
        ),
      );
      expect(statuses).toEqual(['pending', 'pending']);
    });

    it('limits an API key with namespaces: [team-a] to team A’s records and actors, and refuses cluster routes', async () => {
      const key = { key: 'team-a-ci-key' };
      expect((await call(arbiter.url, 'GET', '/api/v1/auth/whoami', key)).body).toMatchObject({
        principal: 'team-a-ci',
        namespaces: ['team-a'],
      });
      const listed = await call(arbiter.url, 'GET', '/api/v1/governance/decisions?limit=100', key);
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(listed.body.decisions.map((d: { decision_id: string }) => d.decision_id).sort()).toEqual(
        [...ids.a].sort(),
      );
      expect(listed.body.total).toBe(ids.a.length);
      expect((await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${ids.b[0]}`, key)).status).toBe(
        404,
      );
      expect((await call(arbiter.url, 'GET', `/api/v1/audit/log/${ids.cluster[0]}`, key)).status).toBe(404);
      // It proposes for team A's actors only.
      const theirs = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        ...key,
        body: {
          actor: { id: 'team-b/bot', type: 'ai-agent' },
          action: { capability: 'deploy.production', parameters: {} },
        },
      });
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(403);
      const ours = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        ...key,
        body: {
          actor: { id: 'team-a/bot', type: 'ai-agent' },
          action: { capability: 'deploy.production', parameters: {} },
        },
      });
      expect(ours.status, JSON.stringify(ours.body)).toBe(200);
      ids.a.push(ours.body.decision_id);
      // Cluster objects and cluster-wide reads are refused, with a message that says why.
      for (const [method, path, body] of [
        ['POST', '/api/v1/policies', { name: 'x', rules: [] }],
        ['GET', '/api/v1/policies', undefined],
        ['GET', '/api/v1/audit/verify', undefined],
      ] as const) {
        const res = await call(arbiter.url, method, path, { ...key, ...(body ? { body } : {}) });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toMatchObject({
          code: 'FORBIDDEN',
          message:
            'key "team-a-ci" is limited to the namespaces team-a; this route is about the whole cluster',
        });
      }
      // A cluster-tier escalation is for cluster reviewers, even of its own namespace's actor.
      expect(
        (
          await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${ids.a[1]}/approve`, {
            ...key,
            body: {},
          })
        ).status,
      ).toBe(403);
    });

    // Needs the namespaced kinds in crds/ and in the index (branch i38-kinds); skipped until then.
    it("lets a team-a RoleBinding reviewer settle a namespace-tier escalation of team A's actor, not team B's", async (ctx) => {
      const cp = controlPlane();
      const crd = await cp.request('GET', `${API}/delegations`);
      if (crd.status === 404) ctx.skip('the Delegation CRD is not in crds/ yet');
      await create(
        cp,
        `${API}/delegations`,
        governanceObject('Delegation', 'teams', {
          namespaces: ['team-a', 'team-b'],
          capabilities: ['deploy.*'],
          maxRiskLevel: 'high',
          reviewers: { maxRiskLevel: 'low' },
        }),
      );
      // The cluster allows deploy.staging (no rule, default ALLOW); each team escalates it.
      for (const team of ['team-a', 'team-b'])
        await create(cp, `${API}/namespaces/${team}/namespacedpolicies`, {
          apiVersion: 'governance.arbiter.dev/v1alpha1',
          kind: 'NamespacedPolicy',
          metadata: { name: 'we-decide', namespace: team },
          spec: { rules: [{ capability: 'deploy.staging', outcome: 'ESCALATE' }] },
        });
      const staging = async (actor: string) => {
        const { value } = await eventually(
          `a namespace-tier escalation of ${actor}`,
          async () => {
            const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
              ...admin,
              body: {
                actor: { id: actor, type: 'ai-agent' },
                action: { capability: 'deploy.staging', parameters: {} },
              },
            });
            return res.body.outcome === 'ESCALATE' ? (res.body.decision_id as string) : undefined;
          },
          30_000,
        );
        return value;
      };
      const ours = await staging('team-a/bot');
      const theirs = await staging('team-b/bot');
      // The namespace tier decided: its policy matched.
      const decided = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${ours}`, admin);
      expect(decided.body.audit.policy_matched).toBe('team-a/we-decide');
      const denied = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${theirs}/approve`, {
        ...as('lead-a'),
        body: {},
      });
      expect(denied.status, JSON.stringify(denied.body)).toBe(403);
      expect(denied.body.error.message).toContain('neither at cluster scope nor in namespace team-b');
      const approved = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${ours}/approve`, {
        ...as('lead-a'),
        body: { comment: 'our call' },
      });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.audit.reviews[0]).toMatchObject({
        reviewer: 'kubernetes:lead-a',
        action: 'approve',
      });
    });

    it("lets a team-a RoleBinding of the chart's arbiter-team-editor write team A's namespaced objects, nothing else", async () => {
      const may = async (verb: string, resource: string, namespace?: string) => {
        const res = await controlPlane().request<any>(
          'POST',
          '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          {
            body: {
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SubjectAccessReview',
              spec: {
                user: 'editor-a',
                resourceAttributes: {
                  group: 'governance.arbiter.dev',
                  resource,
                  verb,
                  ...(namespace ? { namespace } : {}),
                },
              },
            },
          },
        );
        expect(res.status, res.text).toBe(201);
        return res.body.status.allowed === true;
      };
      for (const resource of ['namespacedpolicies', 'namespacedactorgrants']) {
        for (const verb of ['create', 'update', 'delete', 'list'])
          expect(await may(verb, resource, 'team-a')).toBe(true);
        expect(await may('create', resource, 'team-b')).toBe(false);
        expect(await may('list', resource)).toBe(false);
      }
      for (const resource of ['policies', 'actorgrants', 'capabilities', 'delegations'])
        expect(await may('create', resource)).toBe(false);
      // Reviews and reads of its decisions come from the reviewer and auditor roles, not this one.
      expect(await may('approve', 'decisions', 'team-a')).toBe(false);
    });

    it("writes team A's NamespacedPolicy and NamespacedActorGrant in team-a through the API, for its editor RoleBinding or its key, never team B's nor the cluster's", async () => {
      const cp = controlPlane();
      const editor = as('editor-a');
      const write = (method: string, path: string, who: { key: string }, body?: unknown) =>
        call(arbiter.url, method, `/api/v1${path}`, { ...who, ...(body === undefined ? {} : { body }) });
      const rules = [{ capability: 'deploy.staging', outcome: 'DENY' }];
      const inCluster = (path: string) => cp.request<any>('GET', `${API}/namespaces/team-a/${path}`);

      const created = await write('POST', '/namespaces/team-a/policies', editor, { name: 'editors', rules });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ id: 'editors', namespace: 'team-a', status: { ready: true } });
      const stored = await inCluster('namespacedpolicies/editors');
      expect(stored.status).toBe(200);
      expect(stored.body.metadata.annotations['governance.arbiter.dev/changed-by']).toBe(
        'kubernetes:editor-a',
      );
      expect(stored.body.spec.rules).toMatchObject(rules);

      // Its RoleBinding is in team-a: team B's objects, the cluster's, and other roles are refused.
      const theirs = await write('POST', '/namespaces/team-b/policies', editor, { name: 'editors', rules });
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(403);
      expect(theirs.body.error.message).toContain(
        'create namespacedpolicies.governance.arbiter.dev in namespace team-b',
      );
      // The cluster routes' manage scopes come from keys only: RBAC cannot grant them (as before).
      expect((await write('POST', '/policies', editor, { name: 'editors', rules })).status).toBe(401);
      expect(
        (await write('POST', '/namespaces/team-a/policies', as('lead-a'), { name: 'x', rules })).status,
      ).toBe(403);
      // Reads: a cluster auditor reads every namespace's, a team-b auditor none of team A's.
      const read = await write('GET', '/namespaces/team-a/policies/editors', as('auditor-all'));
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect((await write('GET', '/namespaces/team-a/policies', as('auditor-b'))).status).toBe(403);
      const listed = await write('GET', '/namespaces/team-a/policies', editor);
      expect(listed.body.policies.map((p: { name: string }) => p.name)).toContain('editors');
      const bad = await write('GET', '/namespaces/Team_A/policies', editor);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('INVALID_REQUEST');

      const granted = await write('POST', '/namespaces/team-a/actors/helper/grants', editor, {
        capability: 'deploy.staging',
      });
      expect(granted.status, JSON.stringify(granted.body)).toBe(201);
      expect(granted.body.actor_id).toBe('team-a/helper');
      const grants = await write('GET', '/namespaces/team-a/actors/helper/grants', editor);
      expect(grants.body.grants.map((g: { capability: string }) => g.capability)).toEqual(['deploy.staging']);
      const grantObjects = await inCluster('namespacedactorgrants');
      expect(grantObjects.body.items.map((o: any) => o.spec.actor.id)).toContain('helper');
      const revoked = await write('DELETE', '/namespaces/team-a/actors/helper/grants/deploy.staging', editor);
      expect(revoked.body).toEqual({ actor_id: 'team-a/helper', capability: 'deploy.staging', revoked: 1 });
      expect((await inCluster('namespacedactorgrants')).body.items).toEqual([]);

      // The key limited to team-a updates and deletes team A's policy, not team B's.
      const key = { key: 'team-a-ci-key' };
      const updated = await write('PUT', '/namespaces/team-a/policies/editors', key, {
        rules,
        enabled: false,
      });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      expect(updated.body.enabled).toBe(false);
      expect((await write('POST', '/namespaces/team-b/policies', key, { name: 'k', rules })).status).toBe(
        403,
      );
      expect((await write('DELETE', '/namespaces/team-a/policies/editors', key)).status).toBe(200);
      expect((await inCluster('namespacedpolicies/editors')).status).toBe(404);
      // The leader audits a deletion from the watch's delete event, with the caller the API recorded.
      const { value: entry } = await eventually(
        'the audited deletion',
        async () =>
          (
            await call(
              arbiter.url,
              'GET',
              '/api/v1/audit/log?event_type=policy.deleted&limit=1&order=desc',
              admin,
            )
          ).body.entries?.[0],
        30_000,
      );
      expect(entry).toMatchObject({ actor_id: 'team-a-ci', namespace: 'team-a' });
    });
  },
  { users: { 'lead-a': {}, 'auditor-b': {}, 'auditor-all': {}, 'editor-a': {} } },
);
