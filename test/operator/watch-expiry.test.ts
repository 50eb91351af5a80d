import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  PLURAL,
  eventually,
  installControllerRbac,
  object,
  startController,
} from './support/operator-env.js';

/**
 * Watches that expire (410 Gone): the API server ends every watch after a second or two
 * and etcd is compacted every second, with no watch cache in between, so a watch resumed
 * from the resourceVersion of a kind that saw no change is too old and must be relisted.
 */
describeWithControlPlane(
  'controller: resumes watches whose resourceVersion was compacted away (410 Gone)',
  (controlPlane) => {
    let arbiter: ArbiterProcess;
    const kube = (method: string, path: string, body?: unknown) =>
      controlPlane().request<any>(method, path, body === undefined ? {} : { body });
    const create = async (kind: string, name: string, spec: unknown) => {
      const res = await kube('POST', `${API_BASE}/${PLURAL[kind]}`, object(kind, name, spec));
      expect(res.status, res.text).toBe(201);
    };
    const policyNames = async () =>
      (await call(arbiter.url, 'GET', '/api/v1/policies', { key: 'dev-admin-key' })).body.policies.map(
        (p: { name: string }) => p.name,
      ) as string[];

    beforeAll(async () => {
      await installCrds(controlPlane());
      const kubeconfig = await installControllerRbac(controlPlane());
      arbiter = await startController({ kubeconfig, identity: 'controller-a' });
    });
    afterAll(async () => {
      if (!arbiter) return;
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    });

    it('sees a change to a kind that stayed idle while etcd compacted past its resourceVersion', async () => {
      const listedAt = (await kube('GET', `${API_BASE}/policies`)).body.metadata.resourceVersion as string;
      // Move etcd's revision on while Policies stay idle, across several compactions and watch expiries.
      for (let i = 0; i < 8; i += 1) {
        await create('Capability', `filler-${i}`, { name: `filler.c${i}`, riskLevel: 'low' });
        await new Promise((resolve) => setTimeout(resolve, 700));
      }
      // The condition under test holds: resuming the Policy watch from its list is now 410 Gone.
      const resumed = await kube(
        'GET',
        `${API_BASE}/policies?watch=1&timeoutSeconds=1&resourceVersion=${listedAt}`,
      );
      expect(JSON.stringify(resumed.body ?? resumed.text)).toMatch(/"code":410/);
      await create('Policy', 'after-compaction', { rules: [{ capability: 'filler.c0', outcome: 'DENY' }] });
      await eventually(
        'the policy created after compaction',
        async () => ((await policyNames()).includes('after-compaction') ? true : undefined),
        20_000,
      );
      const capabilities = await call(arbiter.url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' });
      expect(capabilities.body.total).toBe(8);
      const ready = await call(arbiter.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
    }, 60_000);
  },
  {
    apiServerFlags: { 'watch-cache': 'false', 'etcd-compaction-interval': '1s', 'min-request-timeout': '1' },
  },
);
