import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  CONTROLLER_NAMESPACE,
  PLURAL,
  eventually,
  installControllerRbac,
  object,
  startController,
} from './support/operator-env.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/**
 * The index is all or nothing: grants without the policies that restrict them must never
 * serve. The controller's ServiceAccount is first denied the list of Policies, so one kind
 * never syncs; until it does, /readyz is 503 naming the kind and proposals are decided
 * against no configuration at all (DENY), never against the partial one (which would ALLOW).
 */
describeWithControlPlane(
  'controller: nothing is published until every kind has been listed',
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    const kube = (method: string, path: string, body?: unknown) =>
      controlPlane().request<any>(method, path, body === undefined ? {} : { body });
    const create = async (kind: string, name: string, spec: unknown) => {
      const res = await kube('POST', `${API_BASE}/${PLURAL[kind]}`, object(kind, name, spec));
      expect(res.status, res.text).toBe(201);
    };
    const propose = () =>
      call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: 'dev-admin-key',
        body: {
          actor: { id: 'agent-7', type: 'automation' },
          action: { capability: 'files.read', parameters: {} },
        },
      });

    beforeAll(async () => {
      await installCrds(controlPlane());
      const kubeconfig = await installControllerRbac(controlPlane());
      // The same ClusterRole, less the Policies: their list is forbidden.
      const role = await kube('GET', `${RBAC}/clusterroles/arbiter-controller`);
      const rules = role.body.rules.map((rule: { resources: string[] }) => ({
        ...rule,
        resources: rule.resources.filter((r) => r !== 'policies'),
      }));
      const replaced = await kube('PUT', `${RBAC}/clusterroles/arbiter-controller`, { ...role.body, rules });
      expect(replaced.status, replaced.text).toBe(200);

      await create('Capability', 'files-read', { name: 'files.read', riskLevel: 'low' });
      await create('ActorGrant', 'agent-7', {
        actor: { id: 'agent-7', type: 'automation' },
        grants: [{ capability: 'files.read' }],
      });
      await create('Policy', 'review-reads', {
        rules: [{ capability: 'files.read', condition: 'true', outcome: 'ESCALATE' }],
      });
      arbiter = await startController({ kubeconfig, identity: 'controller-first-sync' });
    });
    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it('is not ready and decides nothing from a partial index while one kind cannot be listed', async () => {
      // The API comes up after the bounded initial wait, still not ready.
      const waiting = await eventually(
        'the API serving without a synced configuration',
        async () => {
          const ready = await call(arbiter.url, 'GET', '/readyz');
          const check = ready.body.checks?.find((c: { name: string }) => c.name === 'kubernetes');
          return check ? { status: ready.status, check } : undefined;
        },
        30_000,
      );
      expect(waiting.value.status).toBe(503);
      expect(waiting.value.check.ready).toBe(false);
      expect(waiting.value.check.message).toMatch(/^waiting for the first list of Policy\b/);
      expect(waiting.value.check.message).not.toMatch(/Capability|ActorGrant/);

      const decided = await propose();
      expect(decided.status).toBe(200);
      expect(decided.body.outcome).toBe('DENY');
      const capabilities = await call(arbiter.url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' });
      expect(capabilities.body.capabilities).toEqual([]);
    });

    it('publishes the whole configuration, policies included, once the list is allowed', async () => {
      const grant = await kube('POST', `${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'arbiter-controller-policies' },
        rules: [
          { apiGroups: ['governance.arbiter.dev'], resources: ['policies'], verbs: ['get', 'list', 'watch'] },
        ],
      });
      expect(grant.status, grant.text).toBe(201);
      const binding = await kube('POST', `${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'arbiter-controller-policies' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'arbiter-controller-policies',
        },
        subjects: [{ kind: 'ServiceAccount', name: 'arbiter', namespace: CONTROLLER_NAMESPACE }],
      });
      expect(binding.status, binding.text).toBe(201);

      // The watch retries with backoff (up to 30 s between attempts).
      await eventually(
        'readiness',
        async () => ((await call(arbiter.url, 'GET', '/readyz')).status === 200 ? true : undefined),
        60_000,
      );
      const decided = await propose();
      expect(decided.status).toBe(200);
      expect(decided.body.outcome).toBe('ESCALATE');
    });
  },
);
