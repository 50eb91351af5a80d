import { connect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { installControllerRbac, eventually } from '../operator/support/operator-env.js';
import { removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  AGENT,
  SANDBOX,
  applyExample,
  kubectl,
  kubectlOk,
  startWebhookController,
} from './support/admission-env.js';

/** The serving certificate the webhooks present now: its fingerprint and issuer. */
async function servedCertificate(port: number): Promise<{ fingerprint: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve({ fingerprint: cert.fingerprint256, issuer: JSON.stringify(cert.issuer) });
    });
    socket.once('error', reject);
  });
}

/**
 * What happens around the webhooks rather than in them: certificates renewed under load,
 * and the API server's behaviour when the webhook process is gone, per failure policy.
 */
describeWithControlPlane('admission webhooks: renewal and outages', (controlPlane) => {
  const cp = () => controlPlane();
  let kubeconfig: string;
  let running: ArbiterProcess | undefined;

  /** A governed dry-run create through the real API server, as the agent. */
  const governedDryRun = (name: string) =>
    cp().request<any>('POST', `/api/v1/namespaces/${SANDBOX}/configmaps?dryRun=All`, {
      headers: { 'Impersonate-User': AGENT },
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } },
    });
  const webhookFailurePolicy = async () => {
    const res = await cp().request<any>(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/arbiter-governance',
    );
    return res.status === 200 ? (res.body.webhooks[0].failurePolicy as string) : undefined;
  };
  const start = async (extraArgs: string[]) => {
    const started = await startWebhookController(cp(), { identity: 'arbiter-0', kubeconfig, extraArgs });
    running = started.arbiter;
    return started;
  };

  beforeAll(async () => {
    await installCrds(cp());
    kubeconfig = await installControllerRbac(cp());
    for (const file of ['01-sandbox.yaml', '02-capabilities.yaml', '03-grant.yaml', '04-policy.yaml'])
      await applyExample(cp(), file);
  }, 60_000);

  afterEach(async () => {
    await running?.stop();
    if (running) await removeDir(running.dataDir);
    running = undefined;
    await kubectl(cp(), [
      'delete',
      'validatingwebhookconfiguration',
      'arbiter-governance',
      'arbiter-configuration',
      '--ignore-not-found',
    ]);
  });

  it('renews the serving certificate and the CA while the API server keeps calling, without a failed request', async () => {
    // Fail: a webhook call that failed during a renewal would fail the request, not pass it.
    const { port } = await start([
      '--admission-failure-policy',
      'Fail',
      '--admission-ca-validity',
      '60',
      '--admission-cert-validity',
      '30',
    ]);
    await eventually(
      'the webhook to be in effect',
      async () => ((await webhookFailurePolicy()) === 'Fail' ? true : undefined),
      20_000,
    );
    // Governed requests keep coming, paced (the load under which certificates renew, not a
    // wait), until requests have also been sent while a certificate of the second CA was
    // served: 30 s certificates are renewed at two thirds, the 60 s CA at 40 s.
    const seen = new Map<string, string>();
    const sentUnder = new Map<string, number>(); // requests sent while each CA's certificate was served
    const failures: string[] = [];
    const renewed = () =>
      seen.size >= 3 && sentUnder.size === 2 && [...sentUnder.values()].every((n) => n >= 10);
    const deadline = Date.now() + 90_000; // only a bound: the CA is renewed after 40 s
    for (let sent = 0; !renewed() && Date.now() < deadline; sent += 1) {
      const served = await servedCertificate(port);
      seen.set(served.fingerprint, served.issuer);
      sentUnder.set(served.issuer, (sentUnder.get(served.issuer) ?? 0) + 1);
      const res = await governedDryRun(`renewal-${sent}`);
      if (res.status !== 201) failures.push(`${res.status} ${res.text}`);
      await sleep(200);
    }
    expect(failures).toEqual([]);
    // Several certificates, two issuers, and requests through each.
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect(new Set(seen.values()).size).toBe(2);
    expect(Math.min(...sentUnder.values())).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('with failurePolicy Ignore (the default before 1.28), requests pass while the webhook process is gone', async () => {
    await start([]);
    await eventually(
      'the webhook configuration',
      async () => ((await webhookFailurePolicy()) === 'Ignore' ? true : undefined),
      20_000,
    );
    await running!.stop();
    await kubectlOk(cp(), ['-n', SANDBOX, 'create', 'configmap', 'unbound-while-down']);
    const governed = await kubectl(cp(), ['-n', SANDBOX, 'create', 'configmap', 'governed-while-down'], {
      as: AGENT,
    });
    expect(governed.code, governed.stderr).toBe(0);
  }, 60_000);

  it('with failurePolicy Fail, the governed request is refused while the webhook process is gone; deleting the configurations recovers', async () => {
    await start(['--admission-failure-policy', 'Fail']);
    await eventually(
      'the webhook configuration',
      async () => ((await webhookFailurePolicy()) === 'Fail' ? true : undefined),
      20_000,
    );
    expect((await governedDryRun('while-up')).status).toBe(201);
    await running!.stop();
    const refused = await kubectl(cp(), ['-n', SANDBOX, 'create', 'configmap', 'refused-while-down'], {
      as: AGENT,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('failed calling webhook "requests.governance.arbiter.dev"');
    // The README's recovery when Arbiter cannot come back soon.
    await kubectlOk(cp(), [
      'delete',
      'validatingwebhookconfiguration',
      'arbiter-governance',
      'arbiter-configuration',
    ]);
    await eventually('writes to pass again', async () => {
      const res = await kubectl(cp(), ['-n', SANDBOX, 'create', 'configmap', 'after-recovery'], {
        as: AGENT,
      });
      return res.code === 0 ? true : undefined;
    });
  }, 60_000);
});
