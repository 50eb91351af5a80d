import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  CONFIGURATION_WEBHOOK_CONFIGURATION,
  DEFAULT_CERT_SECRET_NAME,
  GOVERNANCE_WEBHOOK_CONFIGURATION,
} from '../../src/admission/admission-settings.js';
import { ARBITER_API_GROUP, rbacAttributes, RBAC_SCOPES, type Scope } from '../../src/auth/index.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import type { ControlPlane, KubeResponse } from '../env/kube-apiserver.js';
import {
  CHART_DIR,
  controllerClusterRole,
  controllerRole,
  REPO,
  renderChart,
  type KubeObject,
} from './support/render-chart.js';

/** The least-privilege RBAC the operator tests run the controller with (test/operator). */
const DEPLOY_RBAC = join(REPO, 'deploy/rbac/controller-rbac.yaml');
/** The chart's copy, which its rbac.yaml template reads the rules from. */
const CHART_RBAC = join(CHART_DIR, 'files/rbac/controller-rbac.yaml');
const UPDATE_COMMAND = 'ARBITER_UPDATE_CHART_RBAC=1 npx vitest run test/chart/rbac.test.ts';

async function deployRbac(): Promise<{ text: string; objects: KubeObject[] }> {
  if (!existsSync(DEPLOY_RBAC)) {
    throw new Error(
      `${DEPLOY_RBAC} is missing: the chart's RBAC must equal the controller's least-privilege rules ` +
        'kept in deploy/rbac (test/operator runs the controller with them); restore the file, or point this test at its new place',
    );
  }
  const text = await readFile(DEPLOY_RBAC, 'utf8');
  return { text, objects: parseAllDocuments(text).map((doc) => doc.toJS() as KubeObject) };
}

function only(objects: KubeObject[], kind: string): KubeObject {
  const found = objects.filter((object) => object.kind === kind);
  expect(found, `exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

describe('the chart RBAC', () => {
  it("reads its rules from an exact copy of deploy/rbac's", async () => {
    const { text } = await deployRbac();
    if (process.env.ARBITER_UPDATE_CHART_RBAC === '1') {
      await mkdir(join(CHART_DIR, 'files/rbac'), { recursive: true });
      await writeFile(CHART_RBAC, text);
    }
    expect(
      await readFile(CHART_RBAC, 'utf8'),
      `charts/arbiter/files/rbac is stale; run \`${UPDATE_COMMAND}\``,
    ).toBe(text);
  });

  it("renders exactly deploy/rbac's rules, bound to the chart's ServiceAccount in the release namespace", async () => {
    const deploy = (await deployRbac()).objects;
    expect(deploy.map((o) => o.kind).sort()).toEqual(
      ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount'].sort(),
    );
    for (const namespace of ['arbiter-system', 'governance']) {
      const chart = await renderChart({ name: 'gov', namespace });
      const clusterRole = controllerClusterRole(chart);
      const role = controllerRole(chart);
      expect(clusterRole.rules).toEqual(
        ownedBy(only(deploy, 'ClusterRole').rules, clusterRole.metadata.name),
      );
      expect(role.rules).toEqual(only(deploy, 'Role').rules);
      expect(role.metadata.namespace).toBe(namespace);
      const serviceAccount = chart.one('ServiceAccount');
      const subject = { kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace };
      expect(serviceAccount.metadata.namespace).toBe(namespace);
      expect(chart.one('ClusterRoleBinding')).toMatchObject({
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: clusterRole.metadata.name,
        },
        subjects: [subject],
      });
      expect(chart.one('RoleBinding')).toMatchObject({
        metadata: { namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name },
        subjects: [subject],
      });
      // The Lease the controller elects its leader on is in the Role's namespace.
      expect(chart.one('Deployment').spec.template.spec.containers[0].env).toContainEqual({
        name: 'POD_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
    }
  });

  it('renders the reviewer and auditor ClusterRoles, named after the release, bound to nobody', async () => {
    const arbiter = await renderChart({ name: 'arbiter' });
    expect(arbiter.all('ClusterRole').map((role) => role.metadata.name)).toEqual([
      'arbiter',
      'arbiter-reviewer',
      'arbiter-auditor',
      'arbiter-team-editor',
      'arbiter-catalog-reader',
    ]);
    const gov = await renderChart({ name: 'gov' });
    const reviewer = gov.one('ClusterRole', 'gov-arbiter-reviewer');
    const auditor = gov.one('ClusterRole', 'gov-arbiter-auditor');
    expect(reviewer.metadata.labels).toEqual(controllerClusterRole(gov).metadata.labels);
    expect(auditor.metadata.labels).toEqual(controllerClusterRole(gov).metadata.labels);
    for (const binding of [...gov.all('ClusterRoleBinding'), ...gov.all('RoleBinding')])
      expect(binding.roleRef.name).toBe(controllerClusterRole(gov).metadata.name);
  });

  it('renders the Role kubectl arbiter needs in the release namespace, as the plugin docs give it', async () => {
    const chart = await renderChart({ name: 'arbiter', namespace: 'arbiter-system' });
    const role = chart.one('Role', 'arbiter-kubectl');
    expect(role.metadata.namespace).toBe('arbiter-system');
    const docs = await readFile(join(REPO, 'docs/kubectl-plugin.md'), 'utf8');
    const documented = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => parse(m[1]!) as KubeObject)
      .find((o) => o?.kind === 'Role' && o.metadata.name === 'arbiter-kubectl');
    expect(documented, 'docs/kubectl-plugin.md shows the Role').toBeDefined();
    expect(role.rules).toEqual(documented!.rules);
    for (const binding of chart.all('RoleBinding')) expect(binding.roleRef.name).not.toBe('arbiter-kubectl');
  });

  it('grants reviewers every verb Arbiter asks RBAC for, auditors only the reads', async () => {
    const chart = await renderChart();
    const reviewer: Rule[] = chart.one('ClusterRole', 'arbiter-reviewer').rules;
    const auditor: Rule[] = chart.one('ClusterRole', 'arbiter-auditor').rules;
    const asked = Object.entries(RBAC_SCOPES).flatMap(([scope, rule]) =>
      rule.verbs.map((verb) => ({ scope, ...rbacAttributes(scope as Scope, verb)! })),
    );
    expect(asked.length).toBeGreaterThan(0);
    for (const request of asked) {
      expect(allows(reviewer, request), JSON.stringify(request)).toBe(true);
      expect(allows(auditor, request), JSON.stringify(request)).toBe(request.scope !== 'governance:review');
    }
    // Nothing beyond that: every rule is about the virtual resources, with no wildcard.
    for (const rule of [...reviewer, ...auditor]) {
      expect(rule.apiGroups).toEqual([ARBITER_API_GROUP]);
      expect(rule.resources.every((resource) => ['decisions', 'auditlog'].includes(resource))).toBe(true);
      expect(rule.verbs).not.toContain('*');
    }
  });

  it('is left out with rbac.create=false', async () => {
    const chart = await renderChart({ values: { rbac: { create: false } } });
    for (const kind of ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'])
      expect(chart.all(kind)).toEqual([]);
  });

  it("names exactly the server's webhook configurations and Secret", async () => {
    const deploy = (await deployRbac()).objects;
    const named = (kind: string, resource: string) =>
      only(deploy, kind)
        .rules.filter((rule: Rule) => rule.resources.includes(resource) && rule.resourceNames)
        .flatMap((rule: Rule) => rule.resourceNames);
    expect(named('ClusterRole', 'validatingwebhookconfigurations').sort()).toEqual(
      [CONFIGURATION_WEBHOOK_CONFIGURATION, GOVERNANCE_WEBHOOK_CONFIGURATION].sort(),
    );
    expect(named('Role', 'secrets')).toEqual([DEFAULT_CERT_SECRET_NAME]);
  });

  it('follows the admission values: the Secret renamed, no Secret rules with cert-manager, no admission rules when off', async () => {
    const deploy = (await deployRbac()).objects;
    const clusterRules: Rule[] = only(deploy, 'ClusterRole').rules;
    const roleRules: Rule[] = only(deploy, 'Role').rules;
    const isWebhookRule = (rule: Rule) => rule.resources.includes('validatingwebhookconfigurations');
    const isSecretRule = (rule: Rule) => rule.resources.includes('secrets');

    const isOwnerRule = (rule: Rule) => rule.resources.includes('clusterroles');
    const renamed = await renderChart({ values: { admission: { certSecretName: 'webhook-serving' } } });
    const release = controllerClusterRole(renamed).metadata.name;
    expect(controllerClusterRole(renamed).rules).toEqual(ownedBy(clusterRules, release));
    expect(controllerRole(renamed).rules).toEqual(
      roleRules.map((rule) =>
        rule.resourceNames?.includes(DEFAULT_CERT_SECRET_NAME)
          ? { ...rule, resourceNames: ['webhook-serving'] }
          : rule,
      ),
    );

    const certManager = await renderChart({ values: { admission: { certManager: { enabled: true } } } });
    expect(controllerClusterRole(certManager).rules).toEqual(ownedBy(clusterRules, release));
    expect(controllerRole(certManager).rules).toEqual(roleRules.filter((rule) => !isSecretRule(rule)));

    const off = await renderChart({ values: { admission: { enabled: false } } });
    expect(controllerClusterRole(off).rules).toEqual(
      clusterRules.filter((rule) => !isWebhookRule(rule) && !isOwnerRule(rule)),
    );
    expect(controllerRole(off).rules).toEqual(roleRules.filter((rule) => !isSecretRule(rule)));
  });
});

/** deploy/rbac's rules with the owner rule naming the release's ClusterRole instead of arbiter-controller. */
function ownedBy(rules: Rule[], clusterRole: string): Rule[] {
  return rules.map((rule) =>
    rule.resources.includes('clusterroles') ? { ...rule, resourceNames: [clusterRole] } : rule,
  );
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** Whether RBAC rules allow a request, as the API server's RBAC authorizer matches them. */
function allows(rules: Rule[], request: { group: string; resource: string; verb: string; name?: string }) {
  const has = (list: string[] | undefined, value: string) => list?.includes(value) || list?.includes('*');
  return rules.some(
    (rule) =>
      has(rule.apiGroups, request.group) &&
      has(rule.resources, request.resource) &&
      has(rule.verbs, request.verb) &&
      (!rule.resourceNames?.length ||
        (request.name !== undefined && rule.resourceNames.includes(request.name))),
  );
}

const WEBHOOKS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

/** Creates the chart's ServiceAccount and RBAC objects for real. */
async function installRbac(controlPlane: ControlPlane, objects: KubeObject[]): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const paths: Record<string, (namespace: string) => string> = {
    ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
    ClusterRole: () => `${rbac}/clusterroles`,
    ClusterRoleBinding: () => `${rbac}/clusterrolebindings`,
    Role: (ns) => `${rbac}/namespaces/${ns}/roles`,
    RoleBinding: (ns) => `${rbac}/namespaces/${ns}/rolebindings`,
  };
  for (const object of objects) {
    const path = paths[object.kind]?.(object.metadata.namespace ?? '');
    if (!path) continue;
    const res = await controlPlane.request('POST', path, { body: object });
    expect(res.status, `${object.kind} ${object.metadata.name}: ${res.text}`).toBe(201);
  }
}

describeWithControlPlane("the chart's admission RBAC on a real API server", (controlPlane) => {
  const releases = [
    // Release names differ: the ClusterRoles are cluster-wide.
    { release: 'arbiter', namespace: 'arbiter-system', values: {}, secret: DEFAULT_CERT_SECRET_NAME },
    {
      release: 'gov',
      namespace: 'governance',
      values: { admission: { certSecretName: 'webhook-serving' } },
      secret: 'webhook-serving',
    },
  ];
  const serviceAccount: Record<string, string> = {};

  beforeAll(async () => {
    for (const { release, namespace, values } of releases) {
      const created = await controlPlane().request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      });
      expect(created.status, created.text).toBe(201);
      const chart = await renderChart({ name: release, namespace, values });
      await installRbac(controlPlane(), chart.objects);
      serviceAccount[namespace] =
        `system:serviceaccount:${namespace}:${chart.one('ServiceAccount').metadata.name}`;
    }
  });

  /** A request as the chart's ServiceAccount of `namespace` (impersonated, so its RBAC applies). */
  const as =
    (namespace: string) =>
    (method: string, path: string, body?: unknown): Promise<KubeResponse> =>
      controlPlane().request(method, path, {
        body,
        headers: { 'Impersonate-User': serviceAccount[namespace]! },
      });
  const admin = (method: string, path: string, body?: unknown) =>
    controlPlane().request(method, path, { body });
  const webhookConfiguration = (name: string) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    // No webhooks: nothing in the test cluster is intercepted.
    webhooks: [],
  });

  it("may create, read, update and delete Arbiter's two webhook configurations, and no one else's", async () => {
    const controller = as('arbiter-system');
    for (const name of [CONFIGURATION_WEBHOOK_CONFIGURATION, GOVERNANCE_WEBHOOK_CONFIGURATION]) {
      const created = await controller('POST', WEBHOOKS, webhookConfiguration(name));
      expect(created.status, created.text).toBe(201);
      const read = await controller('GET', `${WEBHOOKS}/${name}`);
      expect(read.status, read.text).toBe(200);
      const updated = await controller('PUT', `${WEBHOOKS}/${name}`, {
        ...(read.body as object),
        metadata: {
          ...(read.body as KubeObject).metadata,
          labels: { 'app.kubernetes.io/managed-by': 'arbiter' },
        },
      });
      expect(updated.status, updated.text).toBe(200);
      const patched = await controller('PATCH', `${WEBHOOKS}/${name}`, {
        metadata: { annotations: { a: 'b' } },
      });
      expect(patched.status, patched.text).toBe(200);
    }
    expect((await controller('DELETE', `${WEBHOOKS}/${GOVERNANCE_WEBHOOK_CONFIGURATION}`)).status).toBe(200);

    // Someone else's configuration: out of reach, except that `create` cannot be limited by name.
    expect((await admin('POST', WEBHOOKS, webhookConfiguration('someone-elses'))).status).toBe(201);
    for (const [method, body] of [
      ['GET'],
      ['PATCH', { metadata: { labels: { x: 'y' } } }],
      ['DELETE'],
    ] as const) {
      const res = await controller(method, `${WEBHOOKS}/someone-elses`, body);
      expect(res.status, `${method}: ${res.text}`).toBe(403);
    }
    expect((await controller('GET', WEBHOOKS)).status).toBe(403); // no list
  });

  for (const { namespace, secret } of releases) {
    it(`may create, read and update the certificate Secret ${secret} in ${namespace}, and no other Secret`, async () => {
      const controller = as(namespace);
      const secrets = `/api/v1/namespaces/${namespace}/secrets`;
      const body = (name: string) => ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        type: 'Opaque',
        stringData: { 'ca.crt': 'x' },
      });
      const created = await controller('POST', secrets, body(secret));
      expect(created.status, created.text).toBe(201);
      const read = await controller('GET', `${secrets}/${secret}`);
      expect(read.status, read.text).toBe(200);
      const updated = await controller('PUT', `${secrets}/${secret}`, {
        ...body(secret),
        metadata: (read.body as KubeObject).metadata,
      });
      expect(updated.status, updated.text).toBe(200);
      const patched = await controller('PATCH', `${secrets}/${secret}`, { stringData: { 'tls.crt': 'y' } });
      expect(patched.status, patched.text).toBe(200);

      expect((await admin('POST', secrets, body('api-tokens'))).status).toBe(201);
      for (const path of [
        `${secrets}/api-tokens`,
        secrets,
        '/api/v1/namespaces/default/secrets/default-token',
      ]) {
        const res = await controller('GET', path);
        expect(res.status, `GET ${path}: ${res.text}`).toBe(403);
      }
      expect((await controller('DELETE', `${secrets}/${secret}`)).status).toBe(403);
      const other = releases.find((release) => release.secret !== secret)!;
      expect((await controller('GET', `${secrets}/${other.secret}`)).status).toBe(403);
    });
  }
});
