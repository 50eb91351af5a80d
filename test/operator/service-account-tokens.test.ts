import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, removeDir, tempDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { API_BASE, PLURAL, installControllerRbac, object, startController } from './support/operator-env.js';

const NAMESPACE = 'agents';

/**
 * Pods present their ServiceAccount token instead of an API key: the controller, run as
 * users run it under the least-privilege RBAC of deploy/rbac (impersonating its
 * ServiceAccount), has the real API server review the tokens (TokenReview).
 */
describeWithControlPlane('controller: ServiceAccount tokens as credentials', (controlPlane) => {
  let arbiter: ArbiterProcess;
  let keysDir: string;
  const kube = (method: string, path: string, body?: unknown) =>
    controlPlane().request<any>(method, path, body === undefined ? {} : { body });

  /** A token of NAMESPACE/name from the TokenRequest API, as the kubelet mounts into pods. */
  const tokenOf = async (name: string, expirationSeconds = 3600): Promise<string> => {
    const res = await kube('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.status.token as string;
  };
  const propose = (token: string, actor: string) =>
    call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: token,
      body: {
        actor: { id: actor, type: 'automation' },
        action: { capability: 'files.read', parameters: {} },
      },
    });

  let planner: string;
  let intruder: string;

  beforeAll(async () => {
    await installCrds(controlPlane());
    const kubeconfig = await installControllerRbac(controlPlane());
    expect((await kube('POST', '/api/v1/namespaces', { metadata: { name: NAMESPACE } })).status).toBe(201);
    for (const name of ['planner', 'intruder']) {
      const res = await kube('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
        metadata: { name },
      });
      expect(res.status, res.text).toBe(201);
    }
    const capability = await kube(
      'POST',
      `${API_BASE}/${PLURAL.Capability}`,
      object('Capability', 'files-read', { name: 'files.read', riskLevel: 'low' }),
    );
    expect(capability.status, capability.text).toBe(201);
    const grant = await kube(
      'POST',
      `${API_BASE}/${PLURAL.ActorGrant}`,
      object('ActorGrant', 'agent-1', {
        actor: { id: 'agent-1', type: 'automation' },
        grants: [{ capability: 'files.read' }],
      }),
    );
    expect(grant.status, grant.text).toBe(201);
    planner = await tokenOf('planner');
    intruder = await tokenOf('intruder');

    keysDir = await tempDir('arbiter-sa-keys-');
    const keysFile = join(keysDir, 'api-keys.yaml');
    await writeFile(
      keysFile,
      stringify({
        keys: [{ name: 'admin', key: 'dev-admin-key', scopes: ['admin'] }],
        serviceAccounts: [
          {
            namespace: NAMESPACE,
            name: 'planner',
            scopes: ['governance:propose', 'governance:read'],
            actors: ['agent-1'],
          },
        ],
      }),
    );
    arbiter = await startController({
      kubeconfig,
      identity: 'controller-sa',
      apiKeys: keysFile,
    });
    const ready = await call(arbiter.url, 'GET', '/readyz');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
  });
  afterAll(async () => {
    if (arbiter) {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    }
    if (keysDir) await removeDir(keysDir);
  });

  it("lets a listed ServiceAccount's token propose for its actor", async () => {
    const res = await propose(planner, 'agent-1');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.outcome).toBe('ALLOW');
    // The API key next to it still works and is not sent to the API server.
    expect((await call(arbiter.url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' })).status).toBe(
      200,
    );
  });

  it('binds the ServiceAccount to its actors and scopes', async () => {
    const other = await propose(planner, 'agent-2');
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ACTOR_MISMATCH');
    const audit = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: planner });
    expect(audit.status).toBe(403);
    expect(audit.body.error.code).toBe('FORBIDDEN');
  });

  it('refuses the token of an unlisted ServiceAccount, and garbage, with 401', async () => {
    const unlisted = await propose(intruder, 'agent-1');
    expect(unlisted.status).toBe(401);
    expect(unlisted.body.error.code).toBe('UNAUTHENTICATED');
    const [header, payload] = planner.split('.');
    for (const garbage of ['garbage-token', `${header}.${payload}.forged-signature`]) {
      const res = await propose(garbage, 'agent-1');
      expect(res.status, garbage).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('fails closed while the API server is away: an unreviewed token gets 503, never access', async () => {
    // Another lifetime, so not byte-identical to the cached token (1.20's tokens carry no
    // unique id: two requested within one second for one account would be the same).
    const fresh = await tokenOf('planner', 3601);
    expect(fresh).not.toBe(planner);
    await controlPlane().stopApiServer();
    try {
      const res = await propose(fresh, 'agent-1');
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.code).toBe('UNAVAILABLE');
      // A token reviewed within the last 30 s is served from the cache.
      expect((await propose(planner, 'agent-1')).status).toBe(200);
    } finally {
      await controlPlane().startApiServer();
    }
    expect((await propose(fresh, 'agent-1')).status).toBe(200);
  });

  it('never logs a token', () => {
    const logs = arbiter.logs.join('\n');
    for (const token of [planner, intruder]) expect(logs).not.toContain(token);
    expect(logs).toContain('ServiceAccount tokens accepted');
  });
});
