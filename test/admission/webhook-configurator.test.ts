import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import type { AdmissionOptions, CertificateSource } from '../../src/admission/admission-settings.js';
import { CONFIGURATION_RESOURCES } from '../../src/admission/webhook-configurations.js';
import { WebhookConfigurator } from '../../src/controller/webhook-configurator.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { eventually } from '../operator/support/operator-env.js';

const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const NAMES = ['arbiter-configuration', 'arbiter-governance'] as const;
const OWN_NAMESPACE = 'arbiter-system';
const CA_1 = '-----BEGIN CERTIFICATE-----\nMIIBfirst\n-----END CERTIFICATE-----\n';
const CA_2 = '-----BEGIN CERTIFICATE-----\nMIIBsecond\n-----END CERTIFICATE-----\n';
const base64 = (pem: string) => Buffer.from(pem).toString('base64');
/** The writes the configurator made, as it logged them. */
const writesIn = (logs: any[]): string[] =>
  logs.flatMap((line) => /^webhook configuration (created|updated)$/.exec(line.msg)?.[1] ?? []);
const GENERATED: CertificateSource = {
  kind: 'generated',
  secretName: 'arbiter-admission-tls',
  caValiditySeconds: 3600,
  certValiditySeconds: 600,
};

/**
 * The leader's ValidatingWebhookConfigurations against a real Kubernetes 1.20 API server
 * (which cannot run matchConditions; the unit tests cover those). Nothing listens at the
 * webhook URL: the governance webhook runs with failurePolicy Ignore so the API server keeps
 * serving, and nothing here writes Arbiter's own kinds, which the configuration webhook
 * (always Fail) would refuse.
 */
describeWithControlPlane('webhook configurator against kube-apiserver 1.20', (controlPlane) => {
  const running: WebhookConfigurator[] = [];
  const kube = (method: string, path: string, body?: unknown, contentType?: string) =>
    controlPlane().request<any>(method, path, {
      ...(body === undefined ? {} : { body }),
      ...(contentType ? { contentType } : {}),
    });
  const read = async (name: string) => (await kube('GET', `${CONFIGURATIONS}/${name}`)).body;
  const resourceVersions = async () =>
    Promise.all(NAMES.map(async (name) => (await read(name)).metadata.resourceVersion));

  interface World {
    leader: boolean;
    ca: string | undefined;
    bound: string[];
  }

  function startConfigurator(
    world: World,
    certificates: CertificateSource = GENERATED,
    ownerClusterRole: string | undefined = undefined,
  ) {
    const logs: any[] = [];
    let leaderChecks = 0;
    const options: AdmissionOptions = {
      port: 9443,
      endpoint: { kind: 'url', url: 'https://127.0.0.1:1' },
      timeoutSeconds: 5,
      failurePolicy: 'Ignore',
      certificates,
      ownerClusterRole,
    };
    const configurator = new WebhookConfigurator({
      kubeConfig: controlPlane().makeKubeConfig(),
      options,
      ownNamespace: OWN_NAMESPACE,
      caBundle: () => world.ca,
      boundUsernames: () => world.bound,
      isLeader: () => {
        leaderChecks += 1;
        return world.leader;
      },
      logger: pino({ level: 'debug' }, { write: (line: string) => logs.push(JSON.parse(line)) }),
      clock: () => new Date(),
      settings: { discoveryRefreshMs: 300, requestTimeoutMs: 5_000 },
    });
    running.push(configurator);
    configurator.start();
    /** Resolves once `count` more passes have completed. */
    const passes = async (count = 1) => {
      const target = configurator.status().reconciled + count;
      await eventually(`${count} more reconcile pass(es)`, () =>
        Promise.resolve(configurator.status().reconciled >= target ? true : undefined),
      );
    };
    /**
     * Resolves once it has asked `count` more times whether it leads (a follower does only
     * that, at each discovery refresh), or has written something (for the caller to report).
     */
    const leadershipChecks = async (count: number) => {
      const target = leaderChecks + count;
      await eventually(`${count} more leadership checks`, () =>
        Promise.resolve(leaderChecks >= target || writesIn(logs).length > 0 ? true : undefined),
      );
    };
    return { configurator, logs, passes, leadershipChecks };
  }

  afterEach(async () => {
    for (const configurator of running.splice(0)) await configurator.close();
    for (const name of [...NAMES, 'someone-elses']) await kube('DELETE', `${CONFIGURATIONS}/${name}`);
  });

  it('the leader creates both configurations, which the API server accepts and keeps serving with', async () => {
    const { configurator, logs, passes } = startConfigurator({ leader: true, ca: CA_1, bound: ['alice'] });
    await passes();

    const configuration = await read('arbiter-configuration');
    expect(configuration.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'arbiter' });
    expect(configuration.webhooks).toHaveLength(1);
    expect(configuration.webhooks[0]).toMatchObject({
      name: 'configuration.governance.arbiter.dev',
      clientConfig: { url: 'https://127.0.0.1:1/validate/configuration', caBundle: base64(CA_1) },
      failurePolicy: 'Fail',
      sideEffects: 'None',
      rules: [
        {
          apiGroups: ['governance.arbiter.dev'],
          resources: [...CONFIGURATION_RESOURCES],
          scope: '*',
        },
      ],
    });

    const governance = (await read('arbiter-governance')).webhooks[0];
    expect(governance).toMatchObject({
      name: 'requests.governance.arbiter.dev',
      clientConfig: { url: 'https://127.0.0.1:1/validate/governance', caBundle: base64(CA_1) },
      failurePolicy: 'Ignore',
      sideEffects: 'NoneOnDryRun',
      timeoutSeconds: 5,
    });
    expect(governance).not.toHaveProperty('matchConditions');
    expect(configurator.status()).toMatchObject({
      serverVersion: { major: 1, minor: 20 },
      governanceFailurePolicy: 'Ignore',
      lastError: undefined,
    });
    expect(
      logs.find((line) => line.level === 40 && /ALLOWED WITHOUT A DECISION/.test(line.msg)),
    ).toBeDefined();

    // The cluster still takes writes with the webhook matching and nobody listening.
    const created = await kube('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'still-works' },
      data: { a: '1' },
    });
    expect(created.status).toBe(201);
  });

  it('makes a ClusterRole the owner of both configurations, so deleting it (helm uninstall) deletes them', async () => {
    const role = await kube('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'arbiter-owner-test' },
      rules: [],
    });
    expect(role.status, role.text).toBe(201);
    try {
      const first = startConfigurator({ leader: true, ca: CA_1, bound: [] }, GENERATED, 'arbiter-owner-test');
      await first.passes();
      for (const name of NAMES)
        expect((await read(name)).metadata.ownerReferences).toEqual([
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            name: 'arbiter-owner-test',
            uid: role.body.metadata.uid,
          },
        ]);
      // A missing ClusterRole leaves the configurations without an owner, never without webhooks.
      await first.configurator.close(); // it would write them again with the owner it knows
      for (const name of NAMES) await kube('DELETE', `${CONFIGURATIONS}/${name}`);
      await kube('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/arbiter-owner-test');
      const { passes: again, logs } = startConfigurator(
        { leader: true, ca: CA_1, bound: [] },
        GENERATED,
        'gone',
      );
      await again();
      for (const name of NAMES) expect((await read(name)).metadata.ownerReferences).toBeUndefined();
      expect(logs.some((line) => /cannot read the ClusterRole/.test(line.msg))).toBe(true);
    } finally {
      await kube('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/arbiter-owner-test');
    }
  });

  it('governs what the real discovery lists, except what the cluster depends on; new CRDs follow', async () => {
    const { passes } = startConfigurator({ leader: true, ca: CA_1, bound: [] });
    await passes();
    const rules: any[] = (await read('arbiter-governance')).webhooks[0].rules;
    const resourcesOf = (group: string): string[] =>
      rules.find((rule) => rule.apiGroups[0] === group)?.resources ?? [];
    const all = rules.flatMap((rule) =>
      rule.resources.map((resource: string) => `${rule.apiGroups[0]}/${resource}`),
    );

    expect(resourcesOf('')).toEqual(
      expect.arrayContaining(['pods', 'pods/exec', 'pods/eviction', 'configmaps', 'secrets']),
    );
    expect(resourcesOf('apps')).toEqual(expect.arrayContaining(['deployments', 'deployments/scale']));
    expect(resourcesOf('')).not.toEqual(expect.arrayContaining(['events']));
    expect(resourcesOf('')).not.toContain('nodes');
    expect(resourcesOf('')).not.toContain('nodes/proxy');
    expect(all.filter((resource) => resource.endsWith('/status'))).toEqual([]);
    for (const group of [
      'coordination.k8s.io',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'admissionregistration.k8s.io',
    ])
      expect(resourcesOf(group), group).toEqual([]);
    expect(rules.every((rule) => rule.operations.join() === 'CREATE,UPDATE,DELETE,CONNECT')).toBe(true);
    expect(resourcesOf('governance.arbiter.dev')).toEqual([]);

    await installCrds(controlPlane());
    await eventually(
      'the governance rules to include the new CRDs',
      async () => {
        const refreshed: any[] = (await read('arbiter-governance')).webhooks[0].rules;
        const governed = refreshed.find((rule) => rule.apiGroups[0] === 'governance.arbiter.dev');
        return governed?.resources.join() === CONFIGURATION_RESOURCES.join() ? true : undefined;
      },
      15_000,
    );
  });

  it('writes nothing while the state is unchanged, nor for a binding change on 1.20; a CA change updates both', async () => {
    const world: World = { leader: true, ca: CA_1, bound: ['alice'] };
    const { configurator, logs, passes } = startConfigurator(world);
    await passes();
    const before = await resourceVersions();

    await passes(3); // discovery refreshes and re-checks
    world.bound = ['alice', 'system:serviceaccount:agents:bot'];
    configurator.changed();
    await passes();
    // No matchConditions before 1.28: bindings are not part of the configuration there.
    // (The API server keeps the resourceVersion on a no-op update too: the log tells whether we wrote.)
    expect(await resourceVersions()).toEqual(before);
    expect(writesIn(logs)).toEqual(['created', 'created']);

    world.ca = CA_1 + CA_2;
    configurator.changed();
    // Not passes(): a pass under way when the CA changed completes with the old one.
    await eventually('both configurations to be updated', () =>
      Promise.resolve(writesIn(logs).length >= 4 ? true : undefined),
    );
    await passes();
    const after = await resourceVersions();
    expect(writesIn(logs)).toEqual(['created', 'created', 'updated', 'updated']);
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    for (const name of NAMES)
      expect((await read(name)).webhooks[0].clientConfig.caBundle, name).toBe(base64(CA_1 + CA_2));
  });

  it('a non-leader writes nothing; on becoming leader it creates both', async () => {
    const world: World = { leader: false, ca: CA_1, bound: [] };
    const { configurator, logs, passes, leadershipChecks } = startConfigurator(world);
    configurator.changed();
    await leadershipChecks(4); // at four discovery refreshes
    expect(writesIn(logs)).toEqual([]);
    for (const name of NAMES) expect((await kube('GET', `${CONFIGURATIONS}/${name}`)).status, name).toBe(404);
    expect(configurator.status().reconciled).toBe(0);

    world.leader = true;
    configurator.startedLeading();
    await passes();
    for (const name of NAMES) expect((await kube('GET', `${CONFIGURATIONS}/${name}`)).status, name).toBe(200);
    // Passes never overlap: the leader's found nothing there, so no earlier pass wrote.
    expect(writesIn(logs)).toEqual(['created', 'created']);
  });

  it('waits for a generated CA instead of writing configurations the API server could not trust', async () => {
    const world: World = { leader: true, ca: undefined, bound: [] };
    const { configurator, logs, passes } = startConfigurator(world);
    // Passes never overlap: once a second one (at a discovery refresh) found no CA, the first ended.
    await eventually('two passes waiting for the CA', () =>
      Promise.resolve(
        logs.filter((line) => line.msg === 'webhook configurations wait for the generated CA').length >= 2
          ? true
          : undefined,
      ),
    );
    for (const name of NAMES) expect((await kube('GET', `${CONFIGURATIONS}/${name}`)).status, name).toBe(404);
    expect(writesIn(logs)).toEqual([]);

    world.ca = CA_1;
    configurator.changed();
    await passes();
    expect((await read('arbiter-governance')).webhooks[0].clientConfig.caBundle).toBe(base64(CA_1));
    expect(writesIn(logs)).toEqual(['created', 'created']);
  });

  it("keeps the caBundle cert-manager's cainjector wrote, and annotates for it", async () => {
    const world: World = { leader: true, ca: undefined, bound: [] };
    const { configurator, logs, passes } = startConfigurator(world, {
      kind: 'directory',
      dir: '/nonexistent',
      injectCaFrom: `${OWN_NAMESPACE}/arbiter-admission`,
    });
    await passes();
    for (const name of NAMES) {
      const created = await read(name);
      expect(created.metadata.annotations).toEqual({
        'cert-manager.io/inject-ca-from': `${OWN_NAMESPACE}/arbiter-admission`,
      });
      expect(created.webhooks[0].clientConfig).not.toHaveProperty('caBundle');
      // What the cainjector does:
      const injected = await kube(
        'PATCH',
        `${CONFIGURATIONS}/${name}`,
        [{ op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: base64(CA_2) }],
        'application/json-patch+json',
      );
      expect(injected.status, injected.text).toBe(200);
    }
    const injectedVersions = await resourceVersions();
    configurator.changed();
    await passes(2);
    expect(await resourceVersions()).toEqual(injectedVersions);
    expect(writesIn(logs)).toEqual(['created', 'created']);

    // Drift is repaired, the injected CA stays.
    await kube(
      'PATCH',
      `${CONFIGURATIONS}/arbiter-governance`,
      [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 20 }],
      'application/json-patch+json',
    );
    configurator.changed();
    await passes();
    const repaired = (await read('arbiter-governance')).webhooks[0];
    expect(repaired.timeoutSeconds).toBe(5);
    expect(repaired.clientConfig.caBundle).toBe(base64(CA_2));
  });

  it('never touches a configuration without its label', async () => {
    const foreign = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'arbiter-governance', labels: { team: 'platform' } },
      webhooks: [
        {
          name: 'theirs.example.com',
          clientConfig: { url: 'https://127.0.0.1:1/theirs' },
          rules: [
            {
              apiGroups: ['example.com'],
              apiVersions: ['v1'],
              operations: ['CREATE'],
              resources: ['widgets'],
            },
          ],
          failurePolicy: 'Ignore',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    const created = await kube('POST', CONFIGURATIONS, foreign);
    expect(created.status, created.text).toBe(201);

    const { configurator, logs, passes } = startConfigurator({ leader: true, ca: CA_1, bound: [] });
    await passes(2);
    const kept = await read('arbiter-governance');
    expect(kept.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(kept.webhooks.map((webhook: any) => webhook.name)).toEqual(['theirs.example.com']);
    expect((await kube('GET', `${CONFIGURATIONS}/arbiter-configuration`)).status).toBe(200);
    expect(configurator.status().notManaged).toEqual(['arbiter-governance']);
    expect(logs.filter((line) => line.level === 40 && /without its label/.test(line.msg))).toHaveLength(1);
  });
});
