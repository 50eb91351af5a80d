import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApiKeyRegistry } from '../../src/auth/api-keys.js';
import type { AdmissionOptions } from '../../src/admission/admission-settings.js';
import { parseServeOptions, type ServeOptions } from '../../src/cli/serve-options.js';
import { KINDS } from '../../src/model/index.js';
import {
  arbiterContainer,
  controllerClusterRole,
  controllerRole,
  renderChart,
  type RenderedChart,
} from './support/render-chart.js';
import { VALUE_SETS, WITNESS_VKEY } from './support/value-sets.js';

const NAMESPACE = 'arbiter-system';
const POD_ENV = { POD_NAME: 'arbiter-0', POD_NAMESPACE: NAMESPACE };

/** The container's args as the kubelet passes them: $(VAR) expanded from the env. */
function kubeletArgs(chart: RenderedChart, secretValues: Record<string, string> = {}): string[] {
  const container = arbiterContainer(chart);
  const env: Record<string, string> = { ...POD_ENV, ...secretValues };
  for (const variable of container.env ?? [])
    if (typeof variable.value === 'string') env[variable.name] = variable.value;
  return (container.args as string[]).map((arg) =>
    arg.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (match, name: string) => env[name] ?? match),
  );
}

/** What `arbiter serve` makes of the rendered args (its own parser: unknown flags and bad values throw). */
function serveOptions(chart: RenderedChart, secretValues: Record<string, string> = {}): ServeOptions {
  const [command, ...args] = kubeletArgs(chart, secretValues);
  expect(command).toBe('serve');
  const options = parseServeOptions(args, POD_ENV);
  if (options === 'help') throw new Error('the chart asks for --help');
  return options;
}

function volumeMountFor(chart: RenderedChart, file: string): { mount: any; volume: any } {
  const container = arbiterContainer(chart);
  const mount = container.volumeMounts.find((m: { mountPath: string }) => file.startsWith(`${m.mountPath}/`));
  expect(mount, `no volume mounted for ${file}`).toBeDefined();
  const volume = chart
    .one('Deployment')
    .spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
  return { mount, volume };
}

describe('the chart renders', () => {
  it('with the defaults: every object, two hardened replicas with probes and a PodDisruptionBudget', async () => {
    const chart = await renderChart({ values: VALUE_SETS.defaults });
    expect(chart.objects.map((o) => o.kind).sort()).toEqual(
      [
        ...Array(KINDS.length).fill('CustomResourceDefinition'),
        // The controller's; arbiter-reviewer, arbiter-auditor, arbiter-team-editor and
        // arbiter-catalog-reader for people to bind.
        ...Array(5).fill('ClusterRole'),
        'ClusterRoleBinding',
        'Deployment',
        'PodDisruptionBudget',
        // The controller's, and arbiter-kubectl for reviewers who port-forward.
        'Role',
        'Role',
        'RoleBinding',
        'Secret',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    for (const object of chart.objects) {
      expect(object.metadata.labels?.['app.kubernetes.io/instance'], object.kind).toBe('arbiter');
    }
    const deployment = chart.one('Deployment');
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe(chart.one('ServiceAccount').metadata.name);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(
      pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm,
    ).toEqual({
      topologyKey: 'kubernetes.io/hostname',
      labelSelector: { matchLabels: deployment.spec.selector.matchLabels },
    });

    const container = arbiterContainer(chart);
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi' },
    });
    expect(container.env.slice(0, 2)).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);

    const options = serveOptions(chart);
    expect(options).toMatchObject({
      port: 8080,
      riskThreshold: 0.8,
      defaultOutcome: 'ALLOW',
      logLevel: 'info',
      redis: undefined,
      manifests: undefined,
      kubernetes: { kubeconfig: undefined, lease: { name: 'arbiter-controller', namespace: NAMESPACE } },
    });
    const port = container.ports.find((p: { name: string }) => p.name === 'http');
    expect(port.containerPort).toBe(options.port);
    // --data-dir is an emptyDir (the root filesystem is read-only), so is /tmp.
    expect(volumeMountFor(chart, `${options.dataDir}/audit.jsonl`).volume.emptyDir).toEqual({});
    expect(volumeMountFor(chart, '/tmp/x').volume.emptyDir).toEqual({});
    // --api-keys is the chart's Secret, mounted, and a valid keys file.
    const keys = volumeMountFor(chart, options.apiKeys);
    const secret = chart.one('Secret');
    expect(keys.volume.secret.secretName).toBe(secret.metadata.name);
    const file = options.apiKeys.slice(keys.mount.mountPath.length + 1);
    expect(keys.volume.secret.items).toEqual([{ key: file, path: file }]);
    expect(ApiKeyRegistry.fromDocument(parse(secret.stringData[file]))).toBeInstanceOf(ApiKeyRegistry);

    const pdb = chart.one('PodDisruptionBudget');
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: deployment.spec.selector });
    const service = chart.one('Service');
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
      { name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' },
    ]);
  });

  it('NOTES.txt says how to reach the API, and warns about missing keys and Redis', async () => {
    const chart = await renderChart({ values: VALUE_SETS.defaults });
    expect(chart.notes).toContain('kubectl -n arbiter-system port-forward svc/arbiter 8080:8080');
    expect(chart.notes).toContain('http://arbiter.arbiter-system.svc:8080');
    expect(chart.notes).toContain('/api/v1/governance/propose');
    expect(chart.notes).toMatch(/no API keys are configured/);
    expect(chart.notes).toMatch(/WARNING: no Redis is configured/);
    const withRedis = await renderChart({
      values: VALUE_SETS['rediss URL, keys in values, strict decisions, three replicas'],
    });
    expect(withRedis.notes).not.toMatch(/WARNING/);
    expect(withRedis.notes).toContain('API keys: 2 entries in Secret arbiter-api-keys');
  });

  it('with one replica: no PodDisruptionBudget', async () => {
    const chart = await renderChart({ values: VALUE_SETS['one replica (no PodDisruptionBudget)'] });
    expect(chart.one('Deployment').spec.replicas).toBe(1);
    expect(chart.all('PodDisruptionBudget')).toEqual([]);
  });

  it('a policy/v1beta1 PodDisruptionBudget where policy/v1 is not served (Kubernetes < 1.21)', async () => {
    const chart = await renderChart({
      apiVersions: ['v1', 'apps/v1', 'policy/v1beta1', 'policy/v1beta1/PodDisruptionBudget'],
    });
    expect(chart.one('PodDisruptionBudget').apiVersion).toBe('policy/v1beta1');
  });

  it('with a NetworkPolicy that admits the API port from the configured peers only, the webhook port from anywhere', async () => {
    const values = VALUE_SETS['NetworkPolicy on'] as { networkPolicy: { from: unknown[] } };
    const chart = await renderChart({ values });
    const policy = chart.one('NetworkPolicy');
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: chart.one('Deployment').spec.selector.matchLabels },
      policyTypes: ['Ingress'],
      ingress: [
        { ports: [{ port: 'http', protocol: 'TCP' }], from: values.networkPolicy.from },
        // The API server's address is unknown in general: no `from`, any source.
        { ports: [{ port: 'webhook', protocol: 'TCP' }] },
      ],
    });
    expect((await renderChart()).all('NetworkPolicy')).toEqual([]);
  });

  it('with a ServiceMonitor that scrapes /metrics through the Service (shape only: its CRD is not on the test server)', async () => {
    const chart = await renderChart({ values: VALUE_SETS['ServiceMonitor on'] });
    const monitor = chart.one('ServiceMonitor');
    const service = chart.one('Service');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.namespace).toBe(NAMESPACE);
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels)) {
      expect(service.metadata.labels?.[key], key).toBe(value);
    }
    expect(monitor.spec.endpoints).toEqual([
      { port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '10s' },
    ]);
    expect(service.spec.ports.map((p: { name: string }) => p.name)).toContain('http');
    expect((await renderChart()).all('ServiceMonitor')).toEqual([]);
  });

  it('with the Redis URL and API keys from existing Secrets and a private CA for rediss://', async () => {
    const chart = await renderChart({
      values: VALUE_SETS['Redis URL and API keys from existing Secrets, private CA'],
    });
    expect(chart.all('Secret')).toEqual([]);
    const container = arbiterContainer(chart);
    expect(container.env).toContainEqual({
      name: 'ARBITER_REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'arbiter-redis', key: 'url' } },
    });
    const url = 'rediss://default:pw@redis.redis.svc:6380/2';
    const options = serveOptions(chart, { ARBITER_REDIS_URL: url });
    expect(options.redis).toEqual({ url, appendTimeoutMs: 2000, waitReplicas: 0 });
    // The leader checkpoints the shared chain into a ConfigMap the chart's Role may write.
    expect(options.kubernetes?.checkpointConfigMap).toBe('arbiter-audit-checkpoints');
    expect(volumeMountFor(chart, options.apiKeys).volume.secret).toEqual({
      secretName: 'arbiter-api-keys',
      items: [{ key: 'keys.yaml', path: 'keys.yaml' }],
    });
    const ca = container.env.find((e: { name: string }) => e.name === 'NODE_EXTRA_CA_CERTS').value as string;
    expect(volumeMountFor(chart, ca).volume.secret).toEqual({
      secretName: 'redis-ca',
      items: [{ key: 'ca.crt', path: 'ca.crt' }],
    });
    expect(chart.one('Deployment').spec.template.metadata.annotations?.['checksum/api-keys']).toBeUndefined();
    // The checkpoint-signing key: a file only its owner reads, under the origin given.
    expect(options.auditSigning).toEqual({
      keyFile: '/etc/arbiter/audit-signing/key',
      origin: 'arbiter.example.com/prod-audit',
      witnesses: [{ url: 'https://witness.security.example.com', vkey: WITNESS_VKEY }],
    });
    expect(volumeMountFor(chart, options.auditSigning!.keyFile).volume.secret).toEqual({
      secretName: 'arbiter-audit-signing',
      defaultMode: 0o400,
      items: [{ key: 'key', path: 'key' }],
    });
  });

  it('with notification receivers and a signing Secret, as arbiter serve reads them', async () => {
    const chart = await renderChart({
      values: {
        notify: {
          urls: ['https://hooks.example.com/arbiter', 'https://hooks.slack.com/services/T0/B0/x'],
          format: 'slack',
          retrySeconds: 120,
          signing: { existingSecret: 'arbiter-notify-signing', secretKey: 'secret' },
        },
      },
    });
    const options = serveOptions(chart);
    expect(options.notify).toEqual({
      urls: ['https://hooks.example.com/arbiter', 'https://hooks.slack.com/services/T0/B0/x'],
      format: 'slack',
      retrySeconds: 120,
      secretFile: '/etc/arbiter/notify/secret',
    });
    expect(volumeMountFor(chart, options.notify!.secretFile!).volume.secret).toEqual({
      secretName: 'arbiter-notify-signing',
      defaultMode: 0o400,
      items: [{ key: 'secret', path: 'secret' }],
    });
    // Without receivers, nothing of it is rendered.
    const quiet = serveOptions(await renderChart({ values: VALUE_SETS.defaults }));
    expect(quiet.notify).toBeUndefined();
  });

  it('with a mask key Secret for sensitive parameters, as arbiter serve reads it', async () => {
    const chart = await renderChart({
      values: { audit: { maskKey: { existingSecret: 'arbiter-audit-mask', secretKey: 'key' } } },
    });
    const options = serveOptions(chart);
    expect(options.auditMaskKey).toBe('/etc/arbiter/audit-mask/key');
    expect(volumeMountFor(chart, options.auditMaskKey!).volume.secret).toEqual({
      secretName: 'arbiter-audit-mask',
      defaultMode: 0o400,
      items: [{ key: 'key', path: 'key' }],
    });
    expect(serveOptions(await renderChart({ values: VALUE_SETS.defaults })).auditMaskKey).toBeUndefined();
  });

  it('with a claim for audit archives, mounted where arbiter serve writes them', async () => {
    const chart = await renderChart({
      values: {
        redis: { url: 'redis://redis:6379/0' },
        audit: { archive: { existingClaim: 'audit-archives' } },
      },
    });
    const options = serveOptions(chart);
    expect(options.auditArchiveDir).toBe('/var/lib/arbiter-archive');
    const { mount, volume } = volumeMountFor(chart, `${options.auditArchiveDir!}/audit-1.jsonl`);
    expect(mount.readOnly).toBeUndefined();
    expect(volume.persistentVolumeClaim).toEqual({ claimName: 'audit-archives' });
    // Without a claim, a Redis deployment has no archive folder: nothing ephemeral by default.
    const none = await renderChart({ values: { redis: { url: 'redis://redis:6379/0' } } });
    expect(serveOptions(none).auditArchiveDir).toBeUndefined();
  });

  it('with upstream MCP servers for the tool proxy, as arbiter serve reads them', async () => {
    const chart = await renderChart({
      values: {
        mcp: {
          servers: [
            { name: 'notes', url: 'http://notes-mcp.tools.svc:3001/mcp' },
            { name: 'git-hub', url: 'https://mcp.example.com/github' },
          ],
          timeoutSeconds: 12,
        },
      },
    });
    expect(serveOptions(chart).mcp).toEqual({
      upstreams: [
        { name: 'notes', url: new URL('http://notes-mcp.tools.svc:3001/mcp') },
        { name: 'git-hub', url: new URL('https://mcp.example.com/github') },
      ],
      timeoutMs: 12_000,
    });
    expect(serveOptions(await renderChart({ values: VALUE_SETS.defaults })).mcp).toBeUndefined();
  });

  it('with a rediss:// URL, keys in values and strict decision settings, as arbiter serve reads them', async () => {
    const chart = await renderChart({
      values: VALUE_SETS['rediss URL, keys in values, strict decisions, three replicas'],
    });
    const options = serveOptions(chart);
    expect(options).toMatchObject({
      riskThreshold: 0.7,
      defaultOutcome: 'DENY',
      logLevel: 'debug',
      pendingTtlSeconds: 600,
      redis: { url: 'rediss://:s3cret@redis-master.redis:6380/0', appendTimeoutMs: 500, waitReplicas: 1 },
    });
    const secret = chart.one('Secret');
    const registry = ApiKeyRegistry.fromDocument(parse(secret.stringData['api-keys.yaml']));
    expect(registry).toBeInstanceOf(ApiKeyRegistry);
    const pod = chart.one('Deployment').spec.template.spec;
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    expect(chart.one('PodDisruptionBudget').spec.maxUnavailable).toBe(1);
    // A change of keys restarts the pods (the keys are read once at start).
    const annotation = chart.one('Deployment').spec.template.metadata.annotations['checksum/api-keys'];
    const other = await renderChart({ values: { ...VALUE_SETS.defaults } });
    expect(annotation).toMatch(/^[0-9a-f]{64}$/);
    expect(other.one('Deployment').spec.template.metadata.annotations['checksum/api-keys']).not.toBe(
      annotation,
    );
  });

  it('fails when serviceAccount.create is false without a name', async () => {
    await expect(renderChart({ values: { serviceAccount: { create: false } } })).rejects.toThrow(
      /serviceAccount.name is required/,
    );
    const chart = await renderChart({ values: { serviceAccount: { create: false, name: 'mine' } } });
    expect(chart.all('ServiceAccount')).toEqual([]);
    expect(chart.one('Deployment').spec.template.spec.serviceAccountName).toBe('mine');
    expect(chart.one('ClusterRoleBinding').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'mine', namespace: NAMESPACE },
    ]);
  });
});

/** The admission options `arbiter serve` makes of the rendered args. */
function admissionOptions(chart: RenderedChart): AdmissionOptions | undefined {
  return serveOptions(chart).kubernetes?.admission;
}

function ruleFor(rules: { apiGroups: string[]; resources: string[] }[], resource: string): unknown[] {
  return rules.filter((rule) => rule.resources.includes(resource));
}

describe('the admission webhooks in the chart', () => {
  it('are on by default: the webhook port behind Service port 443, a generated certificate in a Secret', async () => {
    const chart = await renderChart({ values: VALUE_SETS.defaults });
    const admission = admissionOptions(chart);
    const service = chart.one('Service');
    const webhookPort = service.spec.ports.find((p: { name: string }) => p.name === 'webhook');
    expect(admission).toEqual({
      port: 9443,
      endpoint: {
        kind: 'service',
        namespace: NAMESPACE,
        name: service.metadata.name,
        port: webhookPort.port,
      },
      timeoutSeconds: 5,
      failurePolicy: undefined,
      certificates: expect.objectContaining({ kind: 'generated', secretName: 'arbiter-admission-tls' }),
      // The release's ClusterRole owns the webhook configurations: helm uninstall removes them.
      ownerClusterRole: controllerClusterRole(chart).metadata.name,
    });
    expect(webhookPort).toEqual({ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' });
    expect(arbiterContainer(chart).ports).toContainEqual({
      name: 'webhook',
      containerPort: admission?.port,
      protocol: 'TCP',
    });
    // The leader may write exactly that Secret; no cert-manager objects.
    expect(ruleFor(controllerRole(chart).rules, 'secrets')).toContainEqual(
      expect.objectContaining({ resourceNames: ['arbiter-admission-tls'] }),
    );
    for (const kind of ['Issuer', 'Certificate']) expect(chart.all(kind)).toEqual([]);
  });

  it('pass the failure policy, timeout, port and Secret name through to arbiter serve', async () => {
    const chart = await renderChart({
      values: VALUE_SETS['admission: own Secret name, Ignore, 20 s, port 8443'],
    });
    const admission = admissionOptions(chart);
    expect(admission).toMatchObject({
      port: 8443,
      timeoutSeconds: 20,
      failurePolicy: 'Ignore',
      certificates: { kind: 'generated', secretName: 'webhook-serving' },
    });
    expect(arbiterContainer(chart).ports).toContainEqual({
      name: 'webhook',
      containerPort: 8443,
      protocol: 'TCP',
    });
    // The Service still answers on 443 and forwards to the port by name.
    expect(chart.one('Service').spec.ports).toContainEqual({
      name: 'webhook',
      port: 443,
      targetPort: 'webhook',
      protocol: 'TCP',
    });
    // The Role follows the Secret's name: the old one is no longer writable.
    const secretRules = ruleFor(controllerRole(chart).rules, 'secrets');
    expect(secretRules).toContainEqual(expect.objectContaining({ resourceNames: ['webhook-serving'] }));
    expect(JSON.stringify(secretRules)).not.toContain('arbiter-admission-tls');
  });

  it('are left out with admission.enabled=false: no flags, port, NetworkPolicy rule or RBAC for them', async () => {
    const chart = await renderChart({ values: VALUE_SETS['admission off'] });
    expect(admissionOptions(chart)).toBeUndefined();
    expect(arbiterContainer(chart).args.filter((arg: string) => arg.startsWith('--admission'))).toEqual([]);
    expect(arbiterContainer(chart).ports.map((p: { name: string }) => p.name)).toEqual(['http']);
    expect(chart.one('Service').spec.ports.map((p: { name: string }) => p.name)).toEqual(['http']);
    expect(chart.one('NetworkPolicy').spec.ingress).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }], from: [{ namespaceSelector: {} }] },
    ]);
    expect(ruleFor(controllerClusterRole(chart).rules, 'validatingwebhookconfigurations')).toEqual([]);
    expect(ruleFor(controllerRole(chart).rules, 'secrets')).toEqual([]);
    expect(chart.notes).toMatch(/Admission webhooks are off/);
    expect(chart.notes).toContain(
      'kubectl delete validatingwebhookconfiguration arbiter-configuration arbiter-governance',
    );
  });

  it('with cert-manager: a CA chain, a serving Certificate for the Service, mounted, and the cainjector source', async () => {
    const values =
      VALUE_SETS['admission: certificates from cert-manager, Fail, NetworkPolicy from the control plane'];
    const chart = await renderChart({ values });
    const admission = admissionOptions(chart);
    const service = chart.one('Service');

    // self-signed Issuer -> CA Certificate -> CA Issuer -> serving Certificate
    const issuers = chart.all('Issuer');
    const certificates = chart.all('Certificate');
    for (const object of [...issuers, ...certificates]) {
      expect(object.apiVersion).toBe('cert-manager.io/v1');
      expect(object.metadata.namespace).toBe(NAMESPACE);
    }
    expect(issuers).toHaveLength(2);
    expect(certificates).toHaveLength(2);
    const issuer = (name: string) => chart.one('Issuer', name);
    const caCertificate = certificates.find((c) => c.spec.isCA === true)!;
    const serving = certificates.find((c) => c.spec.isCA !== true)!;
    expect(issuer(caCertificate.spec.issuerRef.name).spec).toEqual({ selfSigned: {} });
    expect(caCertificate.spec.issuerRef).toMatchObject({ kind: 'Issuer', group: 'cert-manager.io' });
    const caIssuer = issuer(serving.spec.issuerRef.name);
    expect(caIssuer.spec).toEqual({ ca: { secretName: caCertificate.spec.secretName } });
    expect(serving.spec.issuerRef).toMatchObject({ kind: 'Issuer', group: 'cert-manager.io' });
    // The API server calls <service>.<namespace>.svc.
    expect(serving.spec.dnsNames).toContain(`${service.metadata.name}.${NAMESPACE}.svc`);
    expect(serving.spec.usages).toContain('server auth');

    expect(admission).toMatchObject({
      failurePolicy: 'Fail',
      certificates: {
        kind: 'directory',
        dir: '/etc/arbiter/admission-tls',
        injectCaFrom: `${NAMESPACE}/${serving.metadata.name}`,
      },
    });
    const dir = (admission?.certificates as { dir: string }).dir;
    const tls = volumeMountFor(chart, `${dir}/tls.crt`);
    expect(tls.mount).toMatchObject({ mountPath: dir, readOnly: true });
    expect(tls.mount.subPath).toBeUndefined(); // renewals reach the pod
    expect(tls.volume.secret).toEqual({
      secretName: serving.spec.secretName,
      items: [
        { key: 'tls.crt', path: 'tls.crt' },
        { key: 'tls.key', path: 'tls.key' },
      ],
    });
    // The pods read the mounted files: no RBAC on Secrets.
    expect(ruleFor(controllerRole(chart).rules, 'secrets')).toEqual([]);
    expect(ruleFor(controllerClusterRole(chart).rules, 'validatingwebhookconfigurations')).toHaveLength(2);
    // Only the webhook port is narrowed to the configured peers.
    expect(chart.one('NetworkPolicy').spec.ingress[1]).toEqual({
      ports: [{ port: 'webhook', protocol: 'TCP' }],
      from: [{ ipBlock: { cidr: '172.16.0.0/12' } }],
    });
    expect(chart.notes).toContain(`Certificate ${serving.metadata.name}; install cert-manager first`);
  });

  it('NOTES.txt says what happens if Arbiter is down, by failure policy and Kubernetes version', async () => {
    const down =
      /If Arbiter is down, writes of Capabilities, Policies and ActorGrants are refused, and\nthe writes of bound identities are ([^(]+) \(failurePolicy ([^)]+)\)/;
    const cases = [
      [{}, 'v1.31.0', 'refused', 'Fail, automatic for Kubernetes v1.31.0'],
      [{}, 'v1.28.0', 'refused', 'Fail, automatic for Kubernetes v1.28.0'],
      [{}, 'v1.20.2', 'let through ungoverned', 'Ignore, automatic for Kubernetes v1.20.2'],
      [{ failurePolicy: 'Fail' }, 'v1.20.2', 'refused', 'Fail'],
      [{ failurePolicy: 'Ignore' }, 'v1.31.0', 'let through ungoverned', 'Ignore'],
    ] as const;
    for (const [admission, kubeVersion, consequence, policy] of cases) {
      const chart = await renderChart({ values: { admission }, kubeVersion });
      expect(down.exec(chart.notes)?.slice(1), `${JSON.stringify(admission)} on ${kubeVersion}`).toEqual([
        consequence,
        policy,
      ]);
      expect(chart.notes).toContain(
        'kubectl delete validatingwebhookconfiguration arbiter-configuration arbiter-governance',
      );
      expect(chart.notes).toContain('Secret arbiter-admission-tls');
    }
  });
});
