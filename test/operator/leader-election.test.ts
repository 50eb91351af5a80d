import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  CONTROLLER_NAMESPACE,
  eventually,
  installControllerRbac,
  object,
  startController,
} from './support/operator-env.js';

/** Checkpoint the shared chain after every two entries, so the test sees the ConfigMap fill. */
const CHECKPOINT_OFTEN = ['--checkpoint-entries', '2'];
const CHECKPOINTS = `/api/v1/namespaces/${CONTROLLER_NAMESPACE}/configmaps/arbiter-audit-checkpoints`;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${CONTROLLER_NAMESPACE}/leases/arbiter-controller`;
const CONFIG_EVENT_TYPES = [
  'policy.created',
  'policy.updated',
  'capability.registered',
  'actor.grant.created',
];

/**
 * Two controller processes on one cluster and one (Redis) audit log: one leader at a
 * time, and each configuration change audited exactly once, also across a leader change.
 */
describeWithControlPlane(
  'controller: leader election and exactly-once configuration audit',
  (controlPlane) => {
    let redis: RedisServer;
    const controllers: ArbiterProcess[] = [];
    const kube = (method: string, path: string, body?: unknown) =>
      controlPlane().request<any>(method, path, body === undefined ? {} : { body });
    const holder = async () => (await kube('GET', LEASE)).body?.spec?.holderIdentity as string | undefined;
    /** Configuration audit events, through the API of `arbiter` (the log is shared). */
    const configEvents = async (arbiter: ArbiterProcess) => {
      const all: any[] = [];
      for (const type of CONFIG_EVENT_TYPES) {
        const res = await call(arbiter.url, 'GET', `/api/v1/audit/events?event_type=${type}&limit=200`, {
          key: 'dev-admin-key',
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        all.push(...res.body.events);
      }
      return all;
    };
    const eventsFor = (events: any[], type: string, name: string) =>
      events.filter((e) => e.event_type === type && e.data?.name === name);
    /** Waits until `identity` has renewed the Lease `count` times, at its retry period. */
    const renewals = async (identity: string, count: number) => {
      const spec = async () => (await kube('GET', LEASE)).body?.spec;
      let last = (await spec())?.renewTime as string | undefined;
      let seen = 0;
      await eventually(
        `${count} renewals of the Lease by ${identity}`,
        async () => {
          const now = await spec();
          if (now?.holderIdentity !== identity)
            throw new Error(`the Lease is held by ${now?.holderIdentity}`);
          if (now.renewTime !== last) [seen, last] = [seen + 1, now.renewTime];
          return seen >= count ? true : undefined;
        },
        15_000,
      );
    };
    /**
     * A sentinel for "nothing was audited twice": creates a Policy and waits until the leader
     * has audited it and then written its status. Every pass of the leader's duties records
     * whatever its auditor does not know yet and passes never overlap, so an event recorded
     * again for an earlier change is in the log by then.
     */
    const sentinel = async (name: string, via: ArbiterProcess) => {
      const created = await kube('POST', `${API_BASE}/policies`, object('Policy', name, { rules: [] }));
      expect(created.status, created.text).toBe(201);
      await eventually(`${name} audited, then its status written`, async () => {
        const status = (await kube('GET', `${API_BASE}/policies/${name}`)).body?.status;
        const ready =
          status?.observedGeneration === 1 && status.conditions?.some((c: any) => c.type === 'Ready');
        return ready && eventsFor(await configEvents(via), 'policy.created', name).length > 0
          ? true
          : undefined;
      });
    };

    beforeAll(async () => {
      await installCrds(controlPlane());
      const kubeconfig = await installControllerRbac(controlPlane());
      redis = await startRedisServer();
      const a = await startController({
        kubeconfig,
        identity: 'controller-a',
        redisUrl: redis.url,
        extraArgs: CHECKPOINT_OFTEN,
      });
      controllers.push(a);
      await eventually('controller-a to lead', async () =>
        (await holder()) === 'controller-a' ? true : undefined,
      );
      controllers.push(
        await startController({
          kubeconfig,
          identity: 'controller-b',
          redisUrl: redis.url,
          extraArgs: CHECKPOINT_OFTEN,
        }),
      );
    });
    afterAll(async () => {
      for (const c of controllers) {
        await c.stop();
        await removeDir(c.dataDir);
      }
      await redis?.dispose();
    });

    it('elects one leader, which alone audits a kubectl change, once', async () => {
      const [a, b] = controllers as [ArbiterProcess, ArbiterProcess];
      // b campaigns as it starts, then at the period a renews at: once a has renewed twice
      // since, b has found the Lease held, and left it alone, at least once.
      await renewals('controller-a', 2);
      expect(await holder()).toBe('controller-a');
      expect(a.logs.join('\n')).toContain('became leader');
      expect(b.logs.join('\n')).not.toContain('became leader');

      const created = await kube('POST', `${API_BASE}/policies`, object('Policy', 'p1', { rules: [] }));
      expect(created.status, created.text).toBe(201);
      await eventually('p1 audited', async () =>
        eventsFor(await configEvents(b), 'policy.created', 'p1').length > 0 ? true : undefined,
      );
      await sentinel('sentinel-1', b);
      const events = eventsFor(await configEvents(b), 'policy.created', 'p1');
      expect(events).toHaveLength(1);
      expect(events[0].data).toMatchObject({
        uid: created.body.metadata.uid,
        generation: 1,
        changed_by: 'kubernetes',
      });
    });

    it('hands over on shutdown; the new leader neither repeats nor misses an event', async () => {
      const [a, b] = controllers as [ArbiterProcess, ArbiterProcess];
      expect(await a.stop()).toBe(0);
      await eventually('controller-b to lead', async () =>
        (await holder()) === 'controller-b' ? true : undefined,
      );
      const patched = await kube('PATCH', `${API_BASE}/policies/p1`, {
        spec: { rules: [{ capability: 'files.read', outcome: 'DENY' }] },
      });
      expect(patched.status, patched.text).toBe(200);
      await eventually('p1 update audited by b', async () =>
        eventsFor(await configEvents(b), 'policy.updated', 'p1').length > 0 ? true : undefined,
      );
      await sentinel('sentinel-2', b);
      const events = await configEvents(b);
      expect(eventsFor(events, 'policy.created', 'p1')).toHaveLength(1);
      expect(eventsFor(events, 'policy.updated', 'p1')).toHaveLength(1);
      // Exactly once per (uid, generation), whoever recorded it.
      const keys = events.map((e) => `${e.event_type} ${e.data.uid}/${e.data.generation}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(b.logs.join('\n')).toContain('became leader');
    });

    it('the leader checkpoints the shared chain into the ConfigMap, and verification uses it', async () => {
      const [, b] = controllers as [ArbiterProcess, ArbiterProcess];
      for (let i = 0; i < 4; i += 1) {
        await call(b.url, 'POST', '/api/v1/governance/propose', {
          key: 'dev-admin-key',
          body: {
            actor: { id: 'nobody', type: 'automation' },
            action: { capability: 'files.read', parameters: {} },
          },
        });
      }
      const { value: checkpoints } = await eventually('checkpoints in the ConfigMap', async () => {
        const res = await kube('GET', CHECKPOINTS);
        const list = res.status === 200 ? JSON.parse(res.body.data['checkpoints.json']).checkpoints : [];
        return list.length > 0 ? (list as Array<{ seq: number; hash: string }>) : undefined;
      });
      const head = await call(b.url, 'GET', `/api/v1/audit/log?order=desc&limit=1`, { key: 'dev-admin-key' });
      const newest = checkpoints[checkpoints.length - 1]!;
      expect(newest.seq).toBeLessThanOrEqual(head.body.entries[0].seq);
      const verify = await call(b.url, 'GET', '/api/v1/audit/verify', { key: 'dev-admin-key' });
      expect(verify.body).toMatchObject({ ok: true });
      expect(verify.body.checkpoints_checked).toBeGreaterThan(0);
    });
  },
);
