import { request } from 'node:https';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { eventually, installControllerRbac } from '../operator/support/operator-env.js';
import { call, KEYS, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  AGENT,
  SANDBOX,
  applyExample,
  decisionIdIn,
  decisionOf,
  startWebhookController,
} from './support/admission-env.js';

/** Simultaneous retries of one approved request, split across the replicas. */
const TRIES = 50;

interface Replica {
  arbiter: ArbiterProcess;
  port: number;
}

/**
 * Two replicas on one Redis, both serving the governance webhook, sent the same approved
 * request at the same instant as the API server sends it (an AdmissionReview over HTTPS):
 * one is allowed, every other one refused, saying that the approval was already used.
 */
describeWithControlPlane('admission webhooks: an approval used once across replicas', (controlPlane) => {
  const cp = () => controlPlane();
  let redis: RedisServer;
  const replicas: Replica[] = [];
  let ca: string;

  beforeAll(async () => {
    redis = await startRedisServer();
    await installCrds(cp());
    for (const file of ['01-sandbox.yaml', '02-capabilities.yaml', '03-grant.yaml', '04-policy.yaml'])
      await applyExample(cp(), file);
    const kubeconfig = await installControllerRbac(cp());
    const extraArgs = ['--redis', `${redis.url}/0`];
    replicas.push(await startWebhookController(cp(), { identity: 'arbiter-0', kubeconfig, extraArgs }));
    await eventually(
      'arbiter-0 to lead',
      async () => {
        const metrics = await call(replicas[0]!.arbiter.url, 'GET', '/metrics');
        return /^arbiter_leader 1$/m.test(String(metrics.body)) ? true : undefined;
      },
      20_000,
    );
    replicas.push(await startWebhookController(cp(), { identity: 'arbiter-1', kubeconfig, extraArgs }));
    const secret = await cp().request<any>(
      'GET',
      '/api/v1/namespaces/arbiter-system/secrets/arbiter-admission-tls',
    );
    expect(secret.status, secret.text).toBe(200);
    ca = Buffer.from(secret.body.data['ca.crt'], 'base64').toString('utf8');
    // Both serve the webhook with the leader's certificate and know the agent's grant (a
    // dry run, which records nothing, is then escalated).
    for (const replica of replicas)
      await eventually('the replica to govern the agent', async () => {
        const probe = await review(replica, 'probe', true).catch(() => undefined);
        return probe && !probe.allowed ? probe : undefined;
      });
  }, 120_000);

  afterAll(async () => {
    for (const { arbiter } of replicas.reverse()) {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
    }
    await redis?.dispose();
  });

  /** The agent deleting ConfigMap app-settings, as the API server asks the webhook. */
  const review = (replica: Replica, uid: string, dryRun = false) =>
    new Promise<{ allowed: boolean; message: string }>((resolve, reject) => {
      const body = JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid,
          kind: { group: '', version: 'v1', kind: 'ConfigMap' },
          resource: { group: '', version: 'v1', resource: 'configmaps' },
          namespace: SANDBOX,
          name: 'app-settings',
          operation: 'DELETE',
          userInfo: { username: AGENT, groups: ['system:serviceaccounts'] },
          object: null,
          oldObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-settings' } },
          dryRun,
        },
      });
      const req = request(
        {
          host: '127.0.0.1',
          port: replica.port,
          path: '/validate/governance',
          method: 'POST',
          ca,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`${res.statusCode}: ${text}`));
            const { response } = JSON.parse(text);
            resolve({ allowed: response.allowed, message: response.status?.message ?? '' });
          });
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  it('allows one of many simultaneous retries of an approved request, and refuses the others', async () => {
    const first = await review(replicas[0]!, 'first');
    expect(first.allowed).toBe(false);
    expect(first.message).toContain('needs review (ESCALATE)');
    const id = decisionIdIn(first.message);
    const approved = await call(
      replicas[1]!.arbiter.url,
      'POST',
      `/api/v1/governance/decisions/${id}/approve`,
      { key: KEYS.reviewer, body: { comment: 'once' } },
    );
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const tries = await Promise.all(
      Array.from({ length: TRIES }, (_, i) => review(replicas[i % replicas.length]!, `retry-${i}`)),
    );

    expect(tries.filter((t) => t.allowed)).toHaveLength(1);
    const refused = tries.filter((t) => !t.allowed);
    expect(refused).toHaveLength(TRIES - 1);
    for (const t of refused) {
      expect(t.message).toContain('needs review (ESCALATE)');
      expect(t.message).toContain(`the approval of decision ${id} was already used`);
    }
    const used = await decisionOf(replicas[0]!.arbiter, id);
    expect(used.audit.reviews.map((r: { action: string }) => r.action)).toEqual([
      'approve',
      'confirmation_used',
    ]);
  }, 60_000);
});
