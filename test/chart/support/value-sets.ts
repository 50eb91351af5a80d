/** A witness's verifier key ("arbiter audit keygen --witness" made it). */
export const WITNESS_VKEY =
  'witness.security.example.com+0a4e368e+BF5R1hs0C1A+2aliEJExQYU96UMiC14Dj13+LHnEU7uW';

/** Value sets the chart is rendered, validated and applied with (over values.yaml). */
export const VALUE_SETS: Record<string, Record<string, unknown>> = {
  defaults: {},
  'one replica (no PodDisruptionBudget)': { replicas: 1 },
  'NetworkPolicy on': {
    networkPolicy: {
      enabled: true,
      from: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agents' } } },
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ],
    },
  },
  'ServiceMonitor on': {
    serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
  },
  'Redis URL and API keys from existing Secrets, private CA': {
    redis: { existingSecret: 'arbiter-redis', existingSecretKey: 'url', tls: { caSecret: 'redis-ca' } },
    apiKeys: { existingSecret: 'arbiter-api-keys', secretKey: 'keys.yaml' },
    audit: {
      signing: {
        existingSecret: 'arbiter-audit-signing',
        origin: 'arbiter.example.com/prod-audit',
        witnesses: [{ url: 'https://witness.security.example.com', vkey: WITNESS_VKEY }],
      },
    },
  },
  'rediss URL, keys in values, strict decisions, three replicas': {
    replicas: 3,
    redis: { url: 'rediss://:s3cret@redis-master.redis:6380/0', waitReplicas: 1, appendTimeoutMs: 500 },
    apiKeys: {
      keys: [
        {
          name: 'agent-001',
          sha256: '768d431c7599a91b58ae5747e08e9aa96dcb4eef45e029c87e3e060e521dcead',
          scopes: ['governance:propose', 'governance:read'],
          actors: ['agent-001'],
        },
        { name: 'auditor', sha256: 'a'.repeat(64), scopes: ['audit:read'] },
      ],
    },
    risk: { threshold: 0.7 },
    defaultOutcome: 'DENY',
    logLevel: 'debug',
    podAntiAffinity: 'hard',
    extraArgs: ['--pending-ttl', '600'],
  },
  'admission off': { admission: { enabled: false }, networkPolicy: { enabled: true } },
  'admission: own Secret name, Ignore, 20 s, port 8443': {
    admission: { certSecretName: 'webhook-serving', failurePolicy: 'Ignore', timeoutSeconds: 20, port: 8443 },
  },
  'admission: certificates from cert-manager, Fail, NetworkPolicy from the control plane': {
    admission: { failurePolicy: 'Fail', certManager: { enabled: true } },
    networkPolicy: { enabled: true, admissionFrom: [{ ipBlock: { cidr: '172.16.0.0/12' } }] },
  },
};

/** Value sets values.schema.json must reject, with the instance path ajv names. */
export const REJECTED_VALUE_SETS: { name: string; values: Record<string, unknown>; path: string }[] = [
  { name: 'zero replicas', values: { replicas: 0 }, path: '/replicas' },
  {
    name: 'a witness without its verifier key',
    values: { audit: { signing: { witnesses: [{ url: 'https://witness.example.com' }] } } },
    path: '/audit/signing/witnesses/0',
  },
  {
    name: 'a witness verifier key that is not name+keyhash+base64',
    values: {
      audit: {
        signing: { witnesses: [{ url: 'https://witness.example.com', vkey: 'witness.example.com' }] },
      },
    },
    path: '/audit/signing/witnesses/0/vkey',
  },
  { name: 'replicas as a string', values: { replicas: 'two' }, path: '/replicas' },
  {
    name: 'an MCP server name the tool proxy cannot serve',
    values: { mcp: { servers: [{ name: 'Notes', url: 'http://notes:3001/mcp' }] } },
    path: '/mcp/servers/0/name',
  },
  {
    name: 'an MCP server without its URL',
    values: { mcp: { servers: [{ name: 'notes' }] } },
    path: '/mcp/servers/0',
  },
  { name: 'risk threshold above 1', values: { risk: { threshold: 1.5 } }, path: '/risk/threshold' },
  { name: 'unknown default outcome', values: { defaultOutcome: 'MAYBE' }, path: '/defaultOutcome' },
  { name: 'unknown log level', values: { logLevel: 'verbose' }, path: '/logLevel' },
  {
    name: 'Redis URL of another scheme',
    values: { redis: { url: 'http://redis:6379' } },
    path: '/redis/url',
  },
  {
    name: 'Redis URL and Secret at once',
    values: { redis: { url: 'redis://redis:6379/0', existingSecret: 'arbiter-redis' } },
    path: '/redis',
  },
  {
    name: 'API key with an unknown scope',
    values: { apiKeys: { keys: [{ name: 'a', sha256: 'a'.repeat(64), scopes: ['root'] }] } },
    path: '/apiKeys/keys/0/scopes/0',
  },
  {
    name: 'API key with neither key nor sha256',
    values: { apiKeys: { keys: [{ name: 'a', scopes: ['admin'] }] } },
    path: '/apiKeys/keys/0',
  },
  { name: 'misspelt top-level value', values: { replica: 3 }, path: '' },
  { name: 'root user', values: { runAsUser: 0 }, path: '/runAsUser' },
  {
    name: 'admission failure policy in lower case',
    values: { admission: { failurePolicy: 'fail' } },
    path: '/admission/failurePolicy',
  },
  {
    name: 'admission timeout above 30 s',
    values: { admission: { timeoutSeconds: 31 } },
    path: '/admission/timeoutSeconds',
  },
  {
    name: 'admission timeout of 0',
    values: { admission: { timeoutSeconds: 0 } },
    path: '/admission/timeoutSeconds',
  },
  { name: 'a privileged admission port', values: { admission: { port: 443 } }, path: '/admission/port' },
  { name: "the API's port for admission", values: { admission: { port: 8080 } }, path: '/admission/port' },
  {
    name: 'an empty cert Secret name',
    values: { admission: { certSecretName: '' } },
    path: '/admission/certSecretName',
  },
  {
    name: 'misspelt admission value',
    values: { admission: { certmanager: { enabled: true } } },
    path: '/admission',
  },
  {
    name: 'misspelt cert-manager value',
    values: { admission: { certManager: { enable: true } } },
    path: '/admission/certManager',
  },
  {
    name: 'admissionFrom that is not a list of peers',
    values: { networkPolicy: { admissionFrom: { ipBlock: { cidr: '10.0.0.0/8' } } } },
    path: '/networkPolicy/admissionFrom',
  },
];

/** Helm's merge of user values over the chart's: maps merge, the rest replaces, null deletes. */
export function mergeValues(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(current)) out[key] = mergeValues(current, value);
    else out[key] = value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
