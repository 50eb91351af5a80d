import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine, UsageError } from './command-line.js';
import { admissionOptions, type AdmissionFlags } from './admission-options.js';
import { mcpOptions, MCP_HELP, type McpOptions } from './mcp-options.js';
import { notifyOptions, NOTIFY_HELP, type NotifyOptions } from './notify-options.js';
import { urlOf } from './url-arg.js';
import { parseRedisTarget } from '../redis/redis-connection.js';
import type { AdmissionOptions } from '../admission/admission-settings.js';

/** `arbiter serve` options; the only module besides main.ts that reads process.env. */
export interface ServeOptions {
  manifests: string | undefined;
  apiKeys: string;
  dataDir: string;
  port: number;
  host: string;
  logLevel: string;
  riskThreshold: number;
  defaultOutcome: 'ALLOW' | 'DENY';
  pendingTtlSeconds: number;
  keyRateLimit: { requestsPerSecond: number; burst: number };
  checkpointEvery: { entries: number; seconds: number };
  /** Sign checkpoints of the audit tree with the key in this file; the origin defaults to its name. */
  auditSigning:
    | {
        keyFile: string;
        origin: string | undefined;
        /** C2SP tlog-witnesses that cosign each signed checkpoint: URL and verifier key (or its file). */
        witnesses: { url: string; vkey: string }[];
      }
    | undefined;
  /** The HMAC key of masked sensitive parameters, read from this file. */
  auditMaskKey: string | undefined;
  /** Where POST /api/v1/audit/archive writes archives; with --redis only when given (no ephemeral default). */
  auditArchiveDir: string | undefined;
  shutdownGraceSeconds: number;
  verifyIntervalSeconds: number;
  /** Audit to a Redis stream instead of the data directory's file. */
  redis: { url: string; appendTimeoutMs: number; waitReplicas: number } | undefined;
  /** Configuration from the cluster's custom resources instead of --manifests. */
  kubernetes: KubernetesOptions | undefined;
  notify: NotifyOptions | undefined;
  /** The tool proxy's upstream MCP servers. */
  mcp: McpOptions | undefined;
}

export interface KubernetesOptions {
  /** A kubeconfig file; undefined means the in-cluster ServiceAccount. */
  kubeconfig: string | undefined;
  lease: { namespace: string; name: string };
  /** This replica's name in the leader Lease. */
  identity: string;
  /** ConfigMap (in the Lease's namespace) holding the audit chain checkpoints with --redis. */
  checkpointConfigMap: string;
  /** The admission webhooks, served when --admission-service or --admission-url is given. */
  admission: AdmissionOptions | undefined;
}

export const SERVE_HELP = `Usage: arbiter serve [options]

Serves the Arbiter API. Embedded mode: configuration from a manifests folder.
Cluster mode (--kubernetes or --kubeconfig): configuration from the Capability,
Policy and ActorGrant custom resources; the elected leader writes their status.

Options:
  --manifests DIR          folder of Capability/Policy/ActorGrant YAML (watched)
  --api-keys FILE          API keys file (required)
  --data-dir DIR           audit log, checkpoints and API-written objects
                           (default: ./.arbiter-data)
  --port N                 port to listen on; 0 picks a free one (default: 8080)
  --host ADDR              address to bind (default: 0.0.0.0)
  --log-level LEVEL        trace|debug|info|warn|error (default: info)
  --risk-threshold X       risk above this escalates (default: 0.8)
  --default-outcome O      ALLOW or DENY when no rule matches (default: ALLOW)
  --pending-ttl SECONDS    how long ESCALATE/REQUIRE_CONFIRMATION stay pending (default: 3600)
  --key-rate-limit N       requests per second per API key (default: 200)
  --key-burst N            burst per API key (default: 400)
  --checkpoint-entries N   checkpoint the audit chain every N entries (default: 1000)
  --checkpoint-seconds N   ... or every N seconds (default: 60)
  --audit-signing-key FILE sign each checkpoint of the audit log's Merkle tree as a
                           C2SP checkpoint with this key ("arbiter audit keygen")
  --audit-origin ORIGIN    the checkpoints' origin line (default: the key's name)
  --witness URL            send each signed checkpoint to this C2SP tlog-witness
                           ("arbiter witness"); repeatable, each with a --witness-vkey
  --witness-vkey VKEY      the witness's verifier key ("arbiter audit keygen --witness"),
                           or a file holding it; pairs with the --witness of its position
  --audit-mask-key FILE    the secret key of masked parameters: values a capability's
                           schema marks x-arbiter-sensitive are recorded as
                           {"masked": "hmac-sha256:<hex>"} (without it: a key made at
                           start, so masks differ between replicas and restarts)
  --audit-archive-dir DIR  where POST /api/v1/audit/archive writes archives of the
                           oldest audit entries (default: DATA_DIR/archives; with
                           --redis none: give a persistent folder to enable it)
  --shutdown-grace S       seconds to drain requests on SIGTERM (default: 10)
  --verify-interval S      re-verify the whole audit chain every S seconds (default: 300)
  --redis URL              audit to a Redis stream (redis://HOST:PORT/DB, or through
                           Sentinel: redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER/DB);
                           checkpoints stay in --data-dir without a cluster
  --redis-timeout MS       bound on one audit append; past it propose answers 503
                           (default: 2000)
  --redis-wait-replicas N  after each append, WAIT for N replicas (default: 0)
  --kubernetes             read configuration from the cluster (in-cluster
                           ServiceAccount); not with --manifests
  --kubeconfig FILE        ... from the cluster of this kubeconfig instead
  --lease-name NAME        leader-election Lease (default: arbiter-controller)
  --lease-namespace NS     its namespace (default: $POD_NAMESPACE, else default)
  --identity ID            this replica in the Lease (default: $POD_NAME, else
                           HOSTNAME-PID)
  --checkpoint-configmap N with --redis: the ConfigMap (in the Lease's namespace)
                           the leader checkpoints the audit chain into
                           (default: arbiter-audit-checkpoints)

Admission webhooks (cluster mode; served when --admission-service or --admission-url is given):
  --admission-service NS/NAME[:PORT]
                           the Service the API server calls them through (port 443)
  --admission-url URL      https://HOST:PORT of a controller outside the cluster (the
                           serving certificate then names HOST)
  --admission-port N       HTTPS port of the webhooks (default: 9443)
  --admission-timeout S    the webhooks' timeoutSeconds, 1..30 (default: 5)
  --admission-failure-policy P
                           Fail or Ignore for the governance webhook (default: Fail on
                           API servers >= 1.28, which send it only bound identities;
                           Ignore before, where every request would depend on Arbiter)
  --admission-cert-dir DIR tls.crt and tls.key from cert-manager instead of the
                           certificates the leader makes (reloaded when they change)
  --admission-inject-ca-from NS/CERTIFICATE
                           with --admission-cert-dir: cert-manager's cainjector fills in
                           the caBundle of the webhook configurations from this Certificate
  --admission-cert-secret NAME
                           the Secret (Lease namespace) of the generated CA and serving
                           certificate (default: arbiter-admission-tls)
  --admission-ca-validity S, --admission-cert-validity S
                           lifetimes of the generated CA (default: 1 year) and serving
                           certificate (default: 90 days); renewed at two thirds
  --admission-owner-clusterrole NAME
                           this ClusterRole owns the webhook configurations, so
                           Kubernetes deletes them with it (the chart's, on helm uninstall)

${NOTIFY_HELP}
${MCP_HELP}
  -h, --help               this help

Environment: ARBITER_LOG_LEVEL sets the default of --log-level; POD_NAMESPACE and
POD_NAME (from the downward API) those of --lease-namespace and --identity.
`;

function number(
  raw: string | undefined,
  name: string,
  fallback: number,
  check: (n: number) => boolean,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || !check(value))
    throw new UsageError(`--${name}: ${raw} is not a valid value`);
  return value;
}

function redisUrl(raw: string): string {
  try {
    parseRedisTarget(raw);
  } catch (err) {
    throw new UsageError(`--redis: ${(err as Error).message}`);
  }
  return raw;
}

function parseDefaultOutcome(raw: string | undefined): 'ALLOW' | 'DENY' {
  const outcome = (raw ?? 'ALLOW').toUpperCase();
  if (outcome !== 'ALLOW' && outcome !== 'DENY') {
    throw new UsageError('--default-outcome must be ALLOW or DENY');
  }
  return outcome;
}

function redisOptions(
  url: string,
  values: { 'redis-timeout'?: string; 'redis-wait-replicas'?: string },
): NonNullable<ServeOptions['redis']> {
  return {
    url: redisUrl(url),
    appendTimeoutMs: number(values['redis-timeout'], 'redis-timeout', 2000, (n) => n > 0),
    waitReplicas: number(
      values['redis-wait-replicas'],
      'redis-wait-replicas',
      0,
      (n) => Number.isInteger(n) && n >= 0,
    ),
  };
}

export function parseServeOptions(argv: string[], env: NodeJS.ProcessEnv): ServeOptions | 'help' {
  const { values } = parseCommandLine(
    argv,
    {
      manifests: { type: 'string' },
      'api-keys': { type: 'string' },
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'log-level': { type: 'string' },
      'risk-threshold': { type: 'string' },
      'default-outcome': { type: 'string' },
      'pending-ttl': { type: 'string' },
      'key-rate-limit': { type: 'string' },
      'key-burst': { type: 'string' },
      'checkpoint-entries': { type: 'string' },
      'checkpoint-seconds': { type: 'string' },
      'audit-signing-key': { type: 'string' },
      'audit-origin': { type: 'string' },
      witness: { type: 'string', multiple: true },
      'witness-vkey': { type: 'string', multiple: true },
      'shutdown-grace': { type: 'string' },
      'verify-interval': { type: 'string' },
      'audit-mask-key': { type: 'string' },
      'audit-archive-dir': { type: 'string' },
      redis: { type: 'string' },
      'redis-timeout': { type: 'string' },
      'redis-wait-replicas': { type: 'string' },
      kubernetes: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      'lease-name': { type: 'string' },
      'lease-namespace': { type: 'string' },
      identity: { type: 'string' },
      'checkpoint-configmap': { type: 'string' },
      'admission-service': { type: 'string' },
      'admission-url': { type: 'string' },
      'admission-port': { type: 'string' },
      'admission-timeout': { type: 'string' },
      'admission-failure-policy': { type: 'string' },
      'admission-cert-dir': { type: 'string' },
      'admission-inject-ca-from': { type: 'string' },
      'admission-cert-secret': { type: 'string' },
      'admission-ca-validity': { type: 'string' },
      'admission-cert-validity': { type: 'string' },
      'admission-owner-clusterrole': { type: 'string' },
      'notify-url': { type: 'string', multiple: true },
      'notify-format': { type: 'string' },
      'notify-secret-file': { type: 'string' },
      'notify-retry': { type: 'string' },
      'mcp-server': { type: 'string', multiple: true },
      'mcp-timeout': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    'none',
  );
  if (values.help) return 'help';
  if (!values['api-keys']) throw new UsageError('--api-keys FILE is required');
  const defaultOutcome = parseDefaultOutcome(values['default-outcome']);
  const positive = (n: number) => n > 0;
  const inCluster = values.kubernetes === true || values.kubeconfig !== undefined;
  if (inCluster && values.manifests !== undefined)
    throw new UsageError('--manifests cannot be combined with --kubernetes/--kubeconfig');
  const dataDir = values['data-dir'] ?? '.arbiter-data';
  return {
    manifests: values.manifests,
    apiKeys: values['api-keys'],
    dataDir,
    port: number(values.port, 'port', 8080, (n) => Number.isInteger(n) && n >= 0 && n < 65536),
    host: values.host ?? '0.0.0.0',
    logLevel: values['log-level'] ?? env.ARBITER_LOG_LEVEL ?? 'info',
    riskThreshold: number(values['risk-threshold'], 'risk-threshold', 0.8, (n) => n >= 0 && n <= 1),
    defaultOutcome,
    pendingTtlSeconds: number(values['pending-ttl'], 'pending-ttl', 3600, positive),
    keyRateLimit: {
      requestsPerSecond: number(values['key-rate-limit'], 'key-rate-limit', 200, positive),
      burst: number(values['key-burst'], 'key-burst', 400, (n) => n >= 1),
    },
    checkpointEvery: {
      entries: number(
        values['checkpoint-entries'],
        'checkpoint-entries',
        1000,
        (n) => Number.isInteger(n) && n >= 1,
      ),
      seconds: number(values['checkpoint-seconds'], 'checkpoint-seconds', 60, positive),
    },
    auditSigning: auditSigningOptions(values),
    auditMaskKey: values['audit-mask-key'],
    auditArchiveDir: values['audit-archive-dir'] ?? (values.redis ? undefined : join(dataDir, 'archives')),
    shutdownGraceSeconds: number(values['shutdown-grace'], 'shutdown-grace', 10, (n) => n >= 0),
    verifyIntervalSeconds: number(values['verify-interval'], 'verify-interval', 300, positive),
    redis: values.redis ? redisOptions(values.redis, values) : undefined,
    kubernetes: inCluster ? kubernetesOptions(values, env) : refuseAdmissionWithoutCluster(values),
    notify: notifyOptions(values),
    mcp: mcpOptions(values),
  };
}

function auditSigningOptions(values: {
  'audit-signing-key'?: string;
  'audit-origin'?: string;
  witness?: string[];
  'witness-vkey'?: string[];
}): ServeOptions['auditSigning'] {
  const urls = values.witness ?? [];
  const vkeys = values['witness-vkey'] ?? [];
  if (values['audit-signing-key'] === undefined) {
    const given = ['audit-origin', 'witness', 'witness-vkey'].find(
      (flag) => values[flag as keyof typeof values] !== undefined,
    );
    if (given) throw new UsageError(`--${given} needs --audit-signing-key FILE`);
    return undefined;
  }
  if (urls.length !== vkeys.length) {
    throw new UsageError(
      `${urls.length} --witness but ${vkeys.length} --witness-vkey: give each witness URL its verifier key`,
    );
  }
  const witnesses = urls.map((url, i) => {
    const protocol = urlOf(url)?.protocol;
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new UsageError(`--witness: "${url}" is not an http(s) URL`);
    }
    return { url, vkey: vkeys[i]! };
  });
  return { keyFile: values['audit-signing-key'], origin: values['audit-origin'], witnesses };
}

/** Returns nothing: the kubernetes options of a process without a cluster. */
function refuseAdmissionWithoutCluster(values: AdmissionFlags): undefined {
  const given = Object.entries(values).find(
    ([flag, value]) => flag.startsWith('admission-') && value !== undefined,
  );
  if (given)
    throw new UsageError(
      `--${given[0]} needs cluster mode (--kubernetes or --kubeconfig): the webhooks serve the Kubernetes API server`,
    );
  return undefined;
}

function kubernetesOptions(
  values: {
    kubeconfig?: string;
    'lease-name'?: string;
    'lease-namespace'?: string;
    identity?: string;
    'checkpoint-configmap'?: string;
  } & AdmissionFlags,
  env: NodeJS.ProcessEnv,
): KubernetesOptions {
  return {
    admission: admissionOptions(values),
    kubeconfig: values.kubeconfig,
    lease: {
      name: values['lease-name'] ?? 'arbiter-controller',
      namespace: values['lease-namespace'] ?? env.POD_NAMESPACE ?? 'default',
    },
    identity: values.identity ?? env.POD_NAME ?? `${hostname()}-${process.pid}`,
    checkpointConfigMap: values['checkpoint-configmap'] ?? 'arbiter-audit-checkpoints',
  };
}
