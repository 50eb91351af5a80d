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

    /** LISTs of Policies the API server has answered, from its own metrics. */
    const policyLists = async () => {
      const metrics = (await kube('GET', '/metrics')).text.split('\n');
      return metrics
        .filter((line) => /^apiserver_request_total\{.*resource="policies".*verb="LIST"/.test(line))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };

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
      const listsBefore = await policyLists();
      // Move etcd's revision on while Policies stay idle, until it is compacted past their list:
      // resuming a Policy watch from it is then 410 Gone. (Each probe watches for up to a second.)
      let fillers = 0;
      await eventually(
        'etcd to compact past the Policy list',
        async () => {
          await create('Capability', `filler-${fillers}`, { name: `filler.c${fillers}`, riskLevel: 'low' });
          fillers += 1;
          const resumed = await kube(
            'GET',
            `${API_BASE}/policies?watch=1&timeoutSeconds=1&resourceVersion=${listedAt}`,
          );
          return /"code":410/.test(JSON.stringify(resumed.body ?? resumed.text)) ? true : undefined;
        },
        30_000,
      );
      // The controller's own Policy watch expires within two seconds; resumed from the same
      // list it meets the same 410, and relists (the informer lists only then).
      await eventually(
        'the controller to relist Policies',
        async () => ((await policyLists()) > listsBefore ? true : undefined),
        20_000,
      );
      await create('Policy', 'after-compaction', { rules: [{ capability: 'filler.c0', outcome: 'DENY' }] });
      await eventually(
        'the policy created after compaction',
        async () => ((await policyNames()).includes('after-compaction') ? true : undefined),
        20_000,
      );
      const capabilities = await call(arbiter.url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' });
      expect(capabilities.body.total).toBe(fillers);
      const ready = await call(arbiter.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
    }, 60_000);
  },
  {
    apiServerFlags: { 'watch-cache': 'false', 'etcd-compaction-interval': '1s', 'min-request-timeout': '1' },
  },
);
