import { celEnv, parse, plan, type CelInput } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { PLURALS } from '../controller/resources.js';
import { buildIndex } from '../index/index.js';
import { API_VERSION, KINDS } from '../model/index.js';
import type { AdmissionEndpoint } from './admission-settings.js';
import { boundIdentitiesCondition, celStringLiteral } from './bound-identities-condition.js';
import { failurePolicyRisk } from './failure-policy.js';
import { governedRules, neverGovernedBecause, type ApiResourceList } from './governed-rules.js';
import { parseServerVersion } from './server-version.js';
import {
  CONFIGURATION_RESOURCES,
  configurationWebhook,
  defaultFailurePolicy,
  governanceWebhook,
  type GovernanceWebhookInput,
} from './webhook-configurations.js';

// ---- A Kubernetes 1.20.2 server's discovery (trimmed, names and verbs as it lists them) ----
const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const NO_COLLECTION = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS = ['get', 'patch', 'update'];
const PROXY = ['create', 'delete', 'get', 'patch', 'update'];
const CREATE_GET = ['create', 'get'];
const r = (name: string, verbs: string[], namespaced = true) => ({ name, namespaced, verbs });

const DISCOVERY_1_20: ApiResourceList[] = [
  {
    groupVersion: 'v1',
    resources: [
      r('bindings', ['create']),
      r('componentstatuses', ['get', 'list'], false),
      r('configmaps', ALL),
      r('events', ALL),
      r('namespaces', NO_COLLECTION, false),
      r('namespaces/finalize', ['update'], false),
      r('namespaces/status', STATUS, false),
      r('nodes', ALL, false),
      r('nodes/proxy', PROXY, false),
      r('nodes/status', STATUS, false),
      r('pods', ALL),
      r('pods/attach', CREATE_GET),
      r('pods/binding', ['create']),
      r('pods/eviction', ['create']),
      r('pods/exec', CREATE_GET),
      r('pods/log', ['get']),
      r('pods/portforward', CREATE_GET),
      r('pods/proxy', PROXY),
      r('pods/status', STATUS),
      r('secrets', ALL),
      r('serviceaccounts', ALL),
      r('serviceaccounts/token', ['create']),
      r('services', NO_COLLECTION),
      r('services/proxy', PROXY),
      r('services/status', STATUS),
    ],
  },
  {
    groupVersion: 'apps/v1',
    resources: [
      r('deployments', ALL),
      r('deployments/scale', STATUS),
      r('deployments/status', STATUS),
      r('statefulsets', ALL),
      r('statefulsets/scale', STATUS),
      r('statefulsets/status', STATUS),
    ],
  },
  { groupVersion: 'events.k8s.io/v1', resources: [r('events', ALL)] },
  { groupVersion: 'events.k8s.io/v1beta1', resources: [r('events', ALL)] },
  { groupVersion: 'authentication.k8s.io/v1', resources: [r('tokenreviews', ['create'], false)] },
  {
    groupVersion: 'authorization.k8s.io/v1',
    resources: [
      r('localsubjectaccessreviews', ['create']),
      r('selfsubjectaccessreviews', ['create'], false),
      r('selfsubjectrulesreviews', ['create'], false),
      r('subjectaccessreviews', ['create'], false),
    ],
  },
  { groupVersion: 'batch/v1', resources: [r('jobs', ALL), r('jobs/status', STATUS)] },
  { groupVersion: 'batch/v1beta1', resources: [r('cronjobs', ALL), r('cronjobs/status', STATUS)] },
  {
    groupVersion: 'admissionregistration.k8s.io/v1',
    resources: [
      r('mutatingwebhookconfigurations', ALL, false),
      r('validatingwebhookconfigurations', ALL, false),
    ],
  },
  { groupVersion: 'coordination.k8s.io/v1', resources: [r('leases', ALL)] },
  { groupVersion: 'coordination.k8s.io/v1beta1', resources: [r('leases', ALL)] },
  {
    groupVersion: 'governance.arbiter.dev/v1alpha1',
    resources: [
      r('actorgrants', ALL, false),
      r('actorgrants/status', STATUS, false),
      r('capabilities', ALL, false),
      r('capabilities/status', STATUS, false),
      r('policies', ALL, false),
      r('policies/status', STATUS, false),
    ],
  },
];

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
const rule = (group: string, resources: string[]) => ({
  apiGroups: [group],
  apiVersions: ['*'],
  operations: OPERATIONS,
  resources,
  scope: '*',
});

const GOVERNED_1_20 = [
  rule('', [
    'bindings',
    'configmaps',
    'namespaces',
    'namespaces/finalize',
    'pods',
    'pods/attach',
    'pods/binding',
    'pods/eviction',
    'pods/exec',
    'pods/portforward',
    'pods/proxy',
    'secrets',
    'serviceaccounts',
    'serviceaccounts/token',
    'services',
    'services/proxy',
  ]),
  rule('apps', ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale']),
  rule('batch', ['cronjobs', 'jobs']),
  rule('governance.arbiter.dev', ['actorgrants', 'capabilities', 'policies']),
];

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const PEM_BASE64 = Buffer.from(PEM).toString('base64');
const URL_ENDPOINT: AdmissionEndpoint = { kind: 'url', url: 'https://127.0.0.1:9443' };
const SERVICE_ENDPOINT: AdmissionEndpoint = {
  kind: 'service',
  namespace: 'arbiter-system',
  name: 'arbiter',
  port: 9443,
};
const MANAGED = { 'app.kubernetes.io/managed-by': 'arbiter' };

const governanceInput = (overrides: Partial<GovernanceWebhookInput> = {}): GovernanceWebhookInput => ({
  endpoint: URL_ENDPOINT,
  timeoutSeconds: 5,
  caBundlePem: PEM,
  injectCaFrom: undefined,
  serverVersion: { major: 1, minor: 20 },
  failurePolicy: 'Ignore',
  ownNamespace: 'arbiter-system',
  boundUsernames: [],
  discovery: DISCOVERY_1_20,
  ...overrides,
});

describe('configurationWebhook', () => {
  it('sends arbiter-configuration for writes of every configuration kind, cluster and namespaced (url, CA given)', () => {
    expect(
      configurationWebhook({
        endpoint: URL_ENDPOINT,
        timeoutSeconds: 5,
        caBundlePem: PEM,
        injectCaFrom: undefined,
      }),
    ).toStrictEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'arbiter-configuration', labels: MANAGED },
      webhooks: [
        {
          name: 'configuration.governance.arbiter.dev',
          clientConfig: { url: 'https://127.0.0.1:9443/validate/configuration', caBundle: PEM_BASE64 },
          rules: [
            {
              apiGroups: ['governance.arbiter.dev'],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE'],
              resources: [...CONFIGURATION_RESOURCES],
              scope: '*',
            },
          ],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          namespaceSelector: {},
          objectSelector: {},
          sideEffects: 'None',
          timeoutSeconds: 5,
          admissionReviewVersions: ['v1'],
        },
      ],
    });
  });

  it('covers the plural of every configuration kind the controller watches', () => {
    const [rule] = configurationWebhook({
      endpoint: URL_ENDPOINT,
      timeoutSeconds: 5,
      caBundlePem: undefined,
      injectCaFrom: undefined,
    }).webhooks[0]!.rules;
    expect(rule!.resources).toStrictEqual(KINDS.map((kind) => PLURALS[kind]).sort());
  });

  it('leaves the caBundle to cert-manager and asks its cainjector for it (service, no CA)', () => {
    const built = configurationWebhook({
      endpoint: SERVICE_ENDPOINT,
      timeoutSeconds: 7,
      caBundlePem: undefined,
      injectCaFrom: 'arbiter-system/arbiter-admission',
    });
    expect(built.metadata).toStrictEqual({
      name: 'arbiter-configuration',
      labels: MANAGED,
      annotations: { 'cert-manager.io/inject-ca-from': 'arbiter-system/arbiter-admission' },
    });
    expect(built.webhooks[0]!.clientConfig).toStrictEqual({
      service: { namespace: 'arbiter-system', name: 'arbiter', port: 9443, path: '/validate/configuration' },
    });
    expect(built.webhooks[0]!.timeoutSeconds).toBe(7);
  });
});

describe('governanceWebhook', () => {
  it('sends arbiter-governance on a 1.20 server: discovered rules, no matchConditions', () => {
    expect(governanceWebhook(governanceInput({ boundUsernames: ['alice'] }))).toStrictEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'arbiter-governance', labels: MANAGED },
      webhooks: [
        {
          name: 'requests.governance.arbiter.dev',
          clientConfig: { url: 'https://127.0.0.1:9443/validate/governance', caBundle: PEM_BASE64 },
          rules: GOVERNED_1_20,
          failurePolicy: 'Ignore',
          matchPolicy: 'Equivalent',
          namespaceSelector: {
            matchExpressions: [
              {
                key: 'kubernetes.io/metadata.name',
                operator: 'NotIn',
                values: ['arbiter-system', 'kube-system'],
              },
              { key: 'governance.arbiter.dev/ignore', operator: 'DoesNotExist' },
            ],
          },
          objectSelector: {},
          sideEffects: 'NoneOnDryRun',
          timeoutSeconds: 5,
          admissionReviewVersions: ['v1'],
        },
      ],
    });
  });

  it.each([
    { version: { major: 1, minor: 20 }, boundUsernames: ['alice'], matchConditions: undefined },
    { version: { major: 1, minor: 27 }, boundUsernames: ['alice'], matchConditions: undefined },
    {
      version: { major: 1, minor: 28 },
      boundUsernames: ['system:serviceaccount:agents:bot', 'alice', 'alice'],
      matchConditions: [
        {
          name: 'bound-identities',
          expression: "request.userInfo.username in ['alice', 'system:serviceaccount:agents:bot']",
        },
      ],
    },
    {
      version: { major: 1, minor: 31 },
      boundUsernames: [],
      matchConditions: [{ name: 'bound-identities', expression: 'false' }],
    },
  ])(
    'on $version.major.$version.minor, bound $boundUsernames',
    ({ version, boundUsernames, matchConditions }) => {
      const webhook = governanceWebhook(governanceInput({ serverVersion: version, boundUsernames }))
        .webhooks[0]!;
      expect(webhook.matchConditions).toStrictEqual(matchConditions);
      expect('matchConditions' in webhook).toBe(matchConditions !== undefined);
    },
  );

  it('lets a 1.28 server send the ServiceAccount a NamespacedActorGrant binds, from the index', () => {
    const snapshot = buildIndex([
      {
        apiVersion: API_VERSION,
        kind: 'NamespacedActorGrant',
        metadata: { name: 'bot', namespace: 'team-a' },
        spec: { actor: { id: 'bot', subjects: [{ kind: 'ServiceAccount', name: 'bot' }] }, grants: [] },
      },
    ]);
    const webhook = governanceWebhook(
      governanceInput({
        serverVersion: { major: 1, minor: 28 },
        boundUsernames: snapshot.boundIdentities(),
      }),
    ).webhooks[0]!;
    expect(webhook.matchConditions).toStrictEqual([
      {
        name: 'bound-identities',
        expression: "request.userInfo.username in ['system:serviceaccount:team-a:bot']",
      },
    ]);
  });

  it('takes the failure policy, the service and its own namespace from the input', () => {
    const webhook = governanceWebhook(
      governanceInput({
        failurePolicy: 'Fail',
        endpoint: SERVICE_ENDPOINT,
        caBundlePem: undefined,
        ownNamespace: 'kube-system',
      }),
    ).webhooks[0]!;
    expect(webhook.failurePolicy).toBe('Fail');
    expect(webhook.clientConfig).toStrictEqual({
      service: { namespace: 'arbiter-system', name: 'arbiter', port: 9443, path: '/validate/governance' },
    });
    expect(webhook.namespaceSelector.matchExpressions![0]!.values).toStrictEqual(['kube-system']);
  });
});

describe('governedRules', () => {
  it('lists every writable resource of a 1.20 server except what the cluster depends on', () => {
    expect(governedRules(DISCOVERY_1_20)).toStrictEqual(GOVERNED_1_20);
  });

  it('yields the same rules whatever order discovery answers in', () => {
    const shuffled = [...DISCOVERY_1_20]
      .reverse()
      .map((list) => ({ ...list, resources: [...list.resources].reverse() }));
    expect(governedRules(shuffled)).toStrictEqual(GOVERNED_1_20);
  });

  it('governs a new CRD once discovery lists it', () => {
    const withCrd = [
      ...DISCOVERY_1_20,
      { groupVersion: 'example.com/v1', resources: [r('widgets', ALL), r('widgets/status', STATUS)] },
    ];
    expect(governedRules(withCrd)).toContainEqual(rule('example.com', ['widgets']));
  });

  it.each([
    ['', 'events', 'events'],
    ['events.k8s.io', 'events', 'events'],
    ['coordination.k8s.io', 'leases', 'leases'],
    ['authentication.k8s.io', 'tokenreviews', 'reviews'],
    ['authentication.k8s.io', 'selfsubjectreviews', 'reviews'],
    ['authorization.k8s.io', 'subjectaccessreviews', 'reviews'],
    ['authorization.k8s.io', 'localsubjectaccessreviews', 'reviews'],
    ['', 'nodes', 'nodes'],
    ['', 'nodes/proxy', 'nodes'],
    ['', 'nodes/status', 'nodes'],
    ['', 'pods/status', 'status'],
    ['apps', 'deployments/status', 'status'],
    ['example.com', 'widgets/status', 'status'],
    ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'webhook configurations'],
    ['admissionregistration.k8s.io', 'validatingadmissionpolicies', 'webhook configurations'],
  ])('never governs %s %s (%s)', (group, resource, why) => {
    expect(neverGovernedBecause(group, resource)).toContain(why);
  });

  it.each([
    ['', 'pods/exec'],
    ['', 'pods/eviction'],
    ['apps', 'deployments/scale'],
    ['', 'secrets'],
    ['example.com', 'codereviews'],
    ['example.com', 'leases'],
  ])('may govern %s %s', (group, resource) => {
    expect(neverGovernedBecause(group, resource)).toBeUndefined();
  });
});

describe('boundIdentitiesCondition', () => {
  const env = celEnv();
  const matches = (expression: string, username: string): unknown =>
    plan(
      env,
      parse(expression),
    )({
      request: new Map<string, CelInput>([['userInfo', new Map<string, CelInput>([['username', username]])]]),
    });

  const HOSTILE = [
    "o'brien",
    'back\\slash',
    "trailing\\'",
    '"double"',
    "'] || true || ['",
    "x' || true || 'y",
    'line\nbreak\ttab\r',
    'nul\u0000bell\u0007del\u007f',
    '\\u0041',
    'emoji 🦊 and é',
    '',
  ];

  it.each(HOSTILE)('matches exactly the bound name %j', (name) => {
    const { expression } = boundIdentitiesCondition([name, 'system:serviceaccount:agents:bot']);
    expect(matches(expression, name)).toBe(true);
    expect(matches(expression, 'system:serviceaccount:agents:bot')).toBe(true);
    expect(matches(expression, 'someone-else')).toBe(false);
  });

  it('matches every hostile name at once, and nobody else', () => {
    const { expression } = boundIdentitiesCondition(HOSTILE);
    for (const name of HOSTILE) expect(matches(expression, name)).toBe(true);
    expect(matches(expression, 'A')).toBe(false);
    expect(matches(expression, 'o')).toBe(false);
  });

  it('is false with no bound identity', () => {
    expect(boundIdentitiesCondition([])).toStrictEqual({ name: 'bound-identities', expression: 'false' });
    expect(matches('false', 'alice')).toBe(false);
  });

  it.each([
    ['alice', "'alice'"],
    ["o'brien", "'o\\'brien'"],
    ['a\\b', "'a\\\\b'"],
    ['tab\t', "'tab\\u0009'"],
    ['lone \ud800 surrogate', "'lone \ufffd surrogate'"],
    ['\udfff', "'\ufffd'"],
    ['del\u007f', "'del\\u007f'"],
    ['c1\u0085\u009f', "'c1\\u0085\\u009f'"],
    ['\u00a0nbsp', "'\u00a0nbsp'"],
  ])('writes %j as the CEL literal %s', (value, literal) => {
    expect(celStringLiteral(value)).toBe(literal);
  });
});

describe('failure policy', () => {
  it.each([
    [{ major: 1, minor: 20 }, 'Ignore'],
    [{ major: 1, minor: 27 }, 'Ignore'],
    [{ major: 1, minor: 28 }, 'Fail'],
    [{ major: 1, minor: 33 }, 'Fail'],
    [{ major: 2, minor: 0 }, 'Fail'],
  ])('defaults on %j to %s', (version, policy) => {
    expect(defaultFailurePolicy(version)).toBe(policy);
  });

  it.each([
    [{ major: 1, minor: 20 }, 'Ignore' as const, /predates matchConditions.*ALLOWED WITHOUT A DECISION/s],
    [{ major: 1, minor: 20 }, 'Fail' as const, /EVERY write.*label kube-system.*1\.21.*kubectl delete/s],
    [{ major: 1, minor: 25 }, 'Fail' as const, /EVERY write.*except in kube-system, Arbiter's namespace/s],
    [{ major: 1, minor: 28 }, 'Ignore' as const, /ALLOWED WITHOUT A DECISION/],
  ])('says what %j with %s means while Arbiter is down', (version, policy, risk) => {
    expect(failurePolicyRisk(version, policy)).toMatch(risk);
  });

  it('has nothing to say about Fail with matchConditions', () => {
    expect(failurePolicyRisk({ major: 1, minor: 28 }, 'Fail')).toBeUndefined();
  });
});

describe('parseServerVersion', () => {
  it.each([
    [
      { major: '1', minor: '20', gitVersion: 'v1.20.2' },
      { major: 1, minor: 20 },
    ],
    [
      { major: '1', minor: '28+', gitVersion: 'v1.28.3-eks-4f4795d' },
      { major: 1, minor: 28 },
    ],
    [
      { major: '', minor: '', gitVersion: 'v1.29.1-gke.1589000' },
      { major: 1, minor: 29 },
    ],
  ])('reads %j', (info, version) => {
    expect(parseServerVersion(info)).toStrictEqual(version);
  });

  it('refuses a version it cannot read', () => {
    expect(() => parseServerVersion({ gitVersion: 'unknown' })).toThrow(/cannot read/);
  });
});
