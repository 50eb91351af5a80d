import { request } from 'node:https';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { freePort } from '../env/free-ports.js';
import { installCrds } from '../env/install-crds.js';
import { eventually, installControllerRbac } from '../operator/support/operator-env.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  AGENT,
  SANDBOX,
  applyExample,
  kubectl,
  startWebhookController,
  untilGoverned,
} from './support/admission-env.js';

interface Answer {
  status: number;
  body: any;
}

/**
 * The webhooks' HTTPS server as the API server and an attacker see it: served by a
 * follower with the leader's certificate, hostile bodies answered with 4xx, and reviews
 * still answered while the replica drains on SIGTERM.
 */
describeWithControlPlane('admission webhooks: the HTTPS server', (controlPlane) => {
  const cp = () => controlPlane();
  let leader: ArbiterProcess;
  let follower: ArbiterProcess;
  let followerPort: number;
  let ca: string;

  const post = (path: string, body: string | Buffer, contentType = 'application/json') =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: followerPort,
          path,
          method: 'POST',
          ca,
          headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
          );
        },
      );
      req.once('error', reject);
      req.end(body);
    });
  const review = (username: string) =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'direct-1',
        kind: { group: '', version: 'v1', kind: 'ConfigMap' },
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        namespace: SANDBOX,
        name: 'direct',
        operation: 'CREATE',
        userInfo: { username },
        object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'direct' } },
        dryRun: true,
      },
    });

  beforeAll(async () => {
    await installCrds(cp());
    for (const file of ['01-sandbox.yaml', '02-capabilities.yaml', '03-grant.yaml', '04-policy.yaml'])
      await applyExample(cp(), file);
    await kubectl(cp(), ['-n', SANDBOX, 'create', 'deployment', 'web', '--image=nginx']);
    const kubeconfig = await installControllerRbac(cp());
    followerPort = await freePort();
    const url = `https://127.0.0.1:${followerPort}`;
    // The leader names the follower's port in the configurations: the API server calls the follower.
    ({ arbiter: leader } = await startWebhookController(cp(), {
      identity: 'arbiter-0',
      kubeconfig,
      extraArgs: ['--admission-url', url],
    }));
    await eventually(
      'arbiter-0 to lead',
      async () => {
        const metrics = await call(leader.url, 'GET', '/metrics');
        return /^arbiter_leader 1$/m.test(String(metrics.body)) ? true : undefined;
      },
      20_000,
    );
    ({ arbiter: follower } = await startWebhookController(cp(), {
      identity: 'arbiter-1',
      kubeconfig,
      port: followerPort,
      extraArgs: ['--shutdown-grace', '20'],
    }));
    const secret = await cp().request<any>(
      'GET',
      '/api/v1/namespaces/arbiter-system/secrets/arbiter-admission-tls',
    );
    expect(secret.status, secret.text).toBe(200);
    ca = Buffer.from(secret.body.data['ca.crt'], 'base64').toString('utf8');
  }, 120_000);

  afterAll(async () => {
    for (const arbiter of [follower, leader]) {
      await arbiter?.stop();
      if (arbiter) await removeDir(arbiter.dataDir);
    }
  });

  it('is served by a follower with the certificate the leader made', async () => {
    await untilGoverned(cp(), () =>
      kubectl(cp(), ['-n', SANDBOX, 'scale', 'deployment', 'web', '--replicas=20', '--dry-run=server'], {
        as: AGENT,
      }),
    );
    const followerMetrics = String((await call(follower.url, 'GET', '/metrics')).body);
    expect(followerMetrics).toMatch(/^arbiter_leader 0$/m);
    expect(followerMetrics).toMatch(
      /^arbiter_admission_requests_total\{webhook="governance",operation="UPDATE",outcome="DENY"\} [1-9]/m,
    );
    const leaderMetrics = String((await call(leader.url, 'GET', '/metrics')).body);
    expect(leaderMetrics).not.toMatch(/arbiter_admission_requests_total\{webhook="governance"/);
  });

  it('refuses an ActorGrant that binds an identity already bound to another actor, at kubectl apply', async () => {
    const copycat = await kubectl(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin: `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata:
  name: copycat
spec:
  actor:
    id: someone-else
    subjects:
      - {kind: ServiceAccount, namespace: ${SANDBOX}, name: agent}
  grants:
    - capability: k8s.configmaps.create
`,
    });
    expect(copycat.code).toBe(1);
    expect(copycat.stderr).toContain(
      `Conflict: identity ${AGENT} is already bound to actor sandbox-agent by the older ActorGrant sandbox-agent`,
    );
  });

  it('answers hostile bodies with a 4xx and an error code, and keeps serving', async () => {
    const cases: Array<[string, string | Buffer, string, number, string]> = [
      ['/validate/governance', '{not json', 'application/json', 400, 'INVALID_REQUEST'],
      ['/validate/governance', review(AGENT), 'text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [
        '/validate/governance',
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
        'application/json',
        400,
        'INVALID_REQUEST',
      ],
      ['/validate/governance', '[]', 'application/json', 400, 'INVALID_REQUEST'],
      [
        '/validate/configuration',
        '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}',
        'application/json',
        400,
        'INVALID_REQUEST',
      ],
      [
        '/validate/governance',
        Buffer.alloc(9 * 1024 * 1024, 32),
        'application/json',
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      ['/elsewhere', review(AGENT), 'application/json', 404, 'NOT_FOUND'],
    ];
    for (const [path, body, type, status, code] of cases) {
      const answer = await post(path, body, type);
      expect([path, type, answer.status, answer.body?.error?.code]).toEqual([path, type, status, code]);
      expect(answer.body.error.message.length).toBeGreaterThan(0);
    }
    const deep = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    expect((await post('/validate/governance', deep)).status).toBe(400);
    const ok = await post('/validate/governance', review('system:serviceaccount:nobody:x'));
    expect(ok).toEqual({
      status: 200,
      body: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'direct-1', allowed: true },
      },
    });
  });

  it('keeps answering reviews while it drains on SIGTERM', async () => {
    // A request trickling its body keeps the HTTP API draining (up to --shutdown-grace 20 s).
    const port = Number(new URL(follower.url).port);
    const slow = connect(port, '127.0.0.1');
    slow.write(
      'POST /api/v1/governance/propose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    // Its headers were read once it is answered (401: no key); the body it still owes keeps
    // the connection busy, not idle.
    const answered = await new Promise<string>((resolve, reject) => {
      slow.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
      slow.once('error', reject);
    });
    expect(answered).toMatch(/^HTTP\/1\.1 401 /);
    // Listen before the signal: past --shutdown-grace the process may exit at any moment.
    const exited = new Promise<number | null>((resolve) => follower.child.once('exit', resolve));
    follower.child.kill('SIGTERM');
    await eventually('the follower to drain', () =>
      Promise.resolve(
        follower.logs.some((line) => line.includes('shutting down: draining requests')) ? true : undefined,
      ),
    );
    const during = await post('/validate/governance', review(AGENT));
    expect(during.status).toBe(200);
    expect(during.body.response).toMatchObject({ uid: 'direct-1', allowed: true });
    slow.destroy();
    expect(await exited).toBe(0);
  }, 60_000);
});
