import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  eventually,
  installControllerRbac,
  object,
  startController,
} from './support/operator-env.js';

/** Bounds a wait for a change to reach the index: a hang detector, not a speed target. */
const CHANGE_BOUND_MS = 10_000;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/**
 * The tenancy kinds through the controller against a real kube-apiserver: informers across
 * all namespaces, the index, and statuses written on the namespaced status path.
 */
describeWithControlPlane(
  'controller: Delegation, NamespacedPolicy and NamespacedActorGrant',
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    const kube = (method: string, path: string, body?: unknown) =>
      controlPlane().request<any>(method, path, body === undefined ? {} : { body });
    const inNamespace = (ns: string, plural: string) => `${API_BASE}/namespaces/${ns}/${plural}`;
    const createIn = async (ns: string, plural: string, kind: string, name: string, spec: unknown) => {
      const body = { ...object(kind, name, spec), metadata: { name, namespace: ns } };
      const res = await kube('POST', inNamespace(ns, plural), body);
      expect(res.status, res.text).toBe(201);
    };
    const conditions = async (ns: string, plural: string, name: string): Promise<Condition[] | undefined> => {
      const res = await kube('GET', `${inNamespace(ns, plural)}/${name}`);
      return res.body?.status?.conditions as Condition[] | undefined;
    };
    const conditionOf = (ns: string, plural: string, name: string, type: string, reason: string) =>
      eventually(
        `${type} ${reason} on ${ns}/${name}`,
        async () => (await conditions(ns, plural, name))?.find((c) => c.type === type && c.reason === reason),
        CHANGE_BOUND_MS,
      );
    const propose = async (actor: string, capability: string) => {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: 'dev-admin-key',
        body: { actor: { id: actor, type: 'automation' }, action: { capability, parameters: {} } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { outcome: string; reason: string };
    };

    beforeAll(async () => {
      await installCrds(controlPlane());
      for (const ns of ['team-a', 'team-b'])
        await kube('POST', '/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns },
        });
      const kubeconfig = await installControllerRbac(controlPlane());
      for (const [name, riskLevel] of [
        ['db.query', 'low'],
        ['db.drop', 'critical'],
      ] as const) {
        const res = await kube(
          'POST',
          `${API_BASE}/capabilities`,
          object('Capability', name.replace('.', '-'), { name, riskLevel }),
        );
        expect(res.status, res.text).toBe(201);
      }
      const delegation = object('Delegation', 'team-a', {
        namespaces: ['team-a'],
        capabilities: ['db.*'],
        maxRiskLevel: 'high',
      });
      expect((await kube('POST', `${API_BASE}/delegations`, delegation)).status).toBe(201);
      arbiter = await startController({ kubeconfig, identity: 'controller-a' });
    });
    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it('indexes a NamespacedActorGrant and NamespacedPolicy of team-a, and writes their status', async () => {
      await createIn('team-a', 'namespacedactorgrants', 'NamespacedActorGrant', 'bot', {
        actor: { id: 'bot' },
        grants: [{ capability: 'db.query' }],
      });
      await eventually(
        'team-a/bot allowed',
        async () => ((await propose('team-a/bot', 'db.query')).outcome === 'ALLOW' ? true : undefined),
        CHANGE_BOUND_MS,
      );
      await createIn('team-a', 'namespacedpolicies', 'NamespacedPolicy', 'careful', {
        rules: [{ capability: 'db.query', outcome: 'ESCALATE' }],
      });
      await eventually(
        'team-a/careful escalates',
        async () => ((await propose('team-a/bot', 'db.query')).outcome === 'ESCALATE' ? true : undefined),
        CHANGE_BOUND_MS,
      );
      const ready = await conditionOf('team-a', 'namespacedpolicies', 'careful', 'Ready', 'Accepted');
      expect(ready.value.status).toBe('True');
      const within = await conditionOf(
        'team-a',
        'namespacedpolicies',
        'careful',
        'OutsideDelegation',
        'WithinDelegation',
      );
      expect(within.value.status).toBe('False');
      const delegation = await kube('GET', `${API_BASE}/delegations/team-a`);
      expect(delegation.body.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True' });
    });

    it('keeps one name in two namespaces apart: OutsideDelegation where no Delegation covers it', async () => {
      await createIn('team-b', 'namespacedpolicies', 'NamespacedPolicy', 'careful', {
        rules: [{ capability: 'db.drop', outcome: 'DENY' }],
      });
      const outside = await conditionOf(
        'team-b',
        'namespacedpolicies',
        'careful',
        'OutsideDelegation',
        'OutsideDelegation',
      );
      expect(outside.value.status).toBe('True');
      expect(outside.value.message).toContain('no Delegation covers namespace team-b');
      const teamA = await conditions('team-a', 'namespacedpolicies', 'careful');
      expect(teamA?.find((c) => c.type === 'OutsideDelegation')?.status).toBe('False');
    });

    it('marks a grant of a capability above the Delegation OutsideDelegation; it authorizes nothing', async () => {
      await createIn('team-a', 'namespacedactorgrants', 'NamespacedActorGrant', 'dropper', {
        actor: { id: 'dropper' },
        grants: [{ capability: 'db.drop' }],
      });
      const outside = await conditionOf(
        'team-a',
        'namespacedactorgrants',
        'dropper',
        'OutsideDelegation',
        'OutsideDelegation',
      );
      expect(outside.value.message).toContain('db.drop (risk level critical is above high)');
      const ready = (await conditions('team-a', 'namespacedactorgrants', 'dropper'))?.find(
        (c) => c.type === 'Ready',
      );
      expect(ready).toMatchObject({ status: 'True', reason: 'Accepted' });
      expect((await propose('team-a/dropper', 'db.drop')).outcome).toBe('DENY');
    });

    it('ignores a grant binding a ServiceAccount of another namespace: Ready=False ForeignSubject', async () => {
      await createIn('team-a', 'namespacedactorgrants', 'NamespacedActorGrant', 'thief', {
        actor: { id: 'thief', subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: 'team-b' }] },
        grants: [{ capability: 'db.query' }],
      });
      const foreign = await conditionOf(
        'team-a',
        'namespacedactorgrants',
        'thief',
        'Ready',
        'ForeignSubject',
      );
      expect(foreign.value.status).toBe('False');
      expect(foreign.value.message).toContain('ServiceAccount team-b/deployer');
      expect((await propose('team-a/thief', 'db.query')).outcome).toBe('DENY');
    });
    it("authenticates a team-a ServiceAccount's token as the namespaced actor its grant binds", async () => {
      const sa = await kube('POST', '/api/v1/namespaces/team-a/serviceaccounts', {
        metadata: { name: 'runner' },
      });
      expect(sa.status, sa.text).toBe(201);
      await createIn('team-a', 'namespacedactorgrants', 'NamespacedActorGrant', 'runner', {
        actor: { id: 'runner', subjects: [{ kind: 'ServiceAccount', name: 'runner' }] },
        grants: [{ capability: 'db.query' }],
      });
      await conditionOf('team-a', 'namespacedactorgrants', 'runner', 'Ready', 'Accepted');
      const token = await kube('POST', '/api/v1/namespaces/team-a/serviceaccounts/runner/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      });
      expect(token.status, token.text).toBe(201);
      const asRunner = (actor: string) =>
        call(arbiter.url, 'POST', '/api/v1/governance/propose', {
          key: token.body.status.token as string,
          body: {
            actor: { id: actor, type: 'automation' },
            action: { capability: 'db.query', parameters: {} },
          },
        });
      const own = await asRunner('team-a/runner');
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(own.body.outcome).toBe('ESCALATE'); // team-a/careful
      const other = await asRunner('team-a/bot');
      expect(other.status).toBe(403);
      expect(other.body.error.code).toBe('ACTOR_MISMATCH');
    });
  },
);
