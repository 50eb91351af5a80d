import { AuditArchiver } from '../audit/archiving/audit-archiver-service.js';
import { boundHeapGrowth, relaxHeapGrowthIfSmall } from './heap-growth.js';
import { mkdir } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { createApiListener } from '../api/app.js';
import { startingHandler } from '../api/starting-handler.js';
import { KeyRateLimiter } from '../auth/index.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../engine/index.js';
import { RedisRateLimiter } from '../rate-limit/redis-rate-limiter.js';
import { MemoryOneTimeUses, RedisOneTimeUses } from '../one-time-uses/index.js';
import { DEFAULT_KEY_PREFIX } from '../audit/redis/redis-keys.js';
import { LocalClaims, RedisClaims } from '../redis/replica-claims.js';
import { governanceKeepers } from '../governance/archive-keepers.js';
import { ConfigAuditor } from '../governance/config-auditor.js';
import { DecisionService } from '../governance/decision-service.js';
import { ExpirySweeper } from '../governance/expiry-sweeper.js';
import { DefinitionChanges } from '../mcp/definition-changes.js';
import { GovernedToolCalls } from '../mcp/governed-tool-calls.js';
import { MemoryMcpSessions, RedisMcpSessions, type McpSessions } from '../mcp/sessions/index.js';
import { ToolDefinitions } from '../mcp/tool-definitions.js';
import { ToolPins } from '../mcp/tool-pins.js';
import { DEFAULT_IDLE_MS, DEFAULT_MAX_SESSIONS, ToolProxy } from '../mcp/tool-proxy.js';
import { openParameterMasker } from './mask-key.js';
import type { RollbackReport } from '../audit/audit-log.js';
import type { ParameterMasker } from '../governance/parameter-masker.js';
import { InPathDecisions } from '../governance/in-path-decisions.js';
import { PendingReviews } from '../governance/pending-reviews.js';
import { openAdmission } from './admission.js';
import { loadKubeConfig } from './kube-config.js';
import { IndexStore } from '../index/index.js';
import { openAuditBackend, readReceiptSigning } from './audit-backend.js';
import { openAuthenticator } from './authenticator.js';
import { openConfigBackend } from './config-backend.js';
import { asyncLogDestination } from './log-destination.js';
import { openNotifier } from './notifier.js';
import type { Notifier } from '../notify/notifier.js';
import { instrumentAuditLog, Metrics } from '../metrics/index.js';
import type { ServeOptions } from './serve-options.js';
import { VERSION } from './version.js';
import { decidingTier } from '../model/index.js';

/** How often the leader looks for pending decisions past their deadline. */
const EXPIRY_SWEEP_MS = 1000;

export interface RunningServer {
  server: Server;
  port: number;
  logger: Logger;
  /** Drains requests, then flushes and closes the audit log. */
  shutdown(reason: string): Promise<void>;
  /** The admission webhooks' HTTPS port, when they are served. */
  admissionPort(): number | undefined;
}

/** The composition root: the one place that builds clients and wires dependencies. */
export async function startServer(options: ServeOptions, logger: Logger): Promise<RunningServer> {
  const clock = () => new Date();
  await mkdir(options.dataDir, { recursive: true });
  const index = new IndexStore();
  const authenticator = await openAuthenticator(options, logger, index);
  // Key files are read before anything else opens: a bad one stops the start at once.
  const masker = await openParameterMasker(options.auditMaskKey, index, logger);
  const metrics = new Metrics();
  // Listen first: while the audit log and the configuration come up, probes and callers
  // get answers (alive, not ready, 503) instead of a closed port.
  let startupState = 'opening the audit log';
  let handler: RequestListener = startingHandler(VERSION, () => startupState);
  // Node checks these timeouts only every connectionsCheckingInterval (30 s by default), so a
  // client trickling a body could hold its connection for up to 60 s; check every second.
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000, connectionsCheckingInterval: 1_000 },
    (req, res) => handler(req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, host: options.host }, `starting: answering probes on port ${port}`);
  try {
    return await startOnServer(
      options,
      logger,
      { server, port, metrics, authenticator, clock, index, masker },
      {
        setState: (state) => (startupState = state),
        serve: (app) => (handler = app),
      },
    );
  } catch (err) {
    server.close();
    throw err;
  }
}

interface Started {
  server: Server;
  port: number;
  metrics: Metrics;
  authenticator: Awaited<ReturnType<typeof openAuthenticator>>;
  clock: () => Date;
  index: IndexStore;
  masker: ParameterMasker;
}

interface Startup {
  setState: (state: string) => void;
  serve: (app: RequestListener) => void;
}

async function startOnServer(
  options: ServeOptions,
  logger: Logger,
  { server, port, metrics, authenticator, clock, index, masker }: Started,
  startup: Startup,
): Promise<RunningServer> {
  // Entries found gone from Redis: readiness says so (the replica still serves).
  let lastRollback: RollbackReport | undefined;
  // Leadership is known once the configuration backend exists; the audit log asks late.
  let isLeader = () => false;
  const audit = instrumentAuditLog(
    await openAuditBackend(options, logger, () => isLeader(), startup.setState, {
      signingRefused: () => metrics.checkpointSigningRefusals.inc(),
      signingUnavailable: () => metrics.checkpointSigningUnavailable.inc(),
      rolledBack: (rollback) => {
        metrics.auditRollbackDetected.set(1);
        lastRollback = rollback;
      },
      witnessFailed: (witness, reason) => metrics.witnessFailures.inc({ witness, reason }),
    }),
    metrics,
  );
  // Told of a broken chain once it exists (the first verification runs before it does).
  let notifier: Notifier | undefined;
  startup.setState('verifying the audit chain');
  const verifyChain = async () => {
    const report = await audit.verify();
    if (report.ok)
      logger.info({ entries: report.entries_checked, head: report.head }, 'audit chain verified');
    else {
      logger.error(
        { break: report.break },
        'audit chain is BROKEN: the log was altered; see GET /api/v1/audit/verify',
      );
      if (report.break) notifier?.chainBroken(report.break);
    }
    return report.break;
  };
  const startupBreak = await verifyChain();
  const verifier = setInterval(() => {
    verifyChain().catch((err: unknown) => logger.error({ err }, 'audit chain verification failed'));
  }, options.verifyIntervalSeconds * 1000);
  verifier.unref();

  index.onChange((snapshot) => {
    const { counts } = snapshot;
    metrics.indexObjects.set({ kind: 'Capability' }, counts.capabilities);
    metrics.indexObjects.set({ kind: 'Policy' }, counts.policies);
    metrics.indexObjects.set({ kind: 'ActorGrant' }, counts.actorGrantObjects);
    metrics.indexObjects.set({ kind: 'Delegation' }, counts.delegations);
    metrics.indexObjects.set({ kind: 'NamespacedPolicy' }, counts.namespacedPolicies);
    metrics.indexObjects.set({ kind: 'NamespacedActorGrant' }, counts.namespacedActorGrantObjects);
    metrics.indexNotReady.set(counts.notReady);
    metrics.lastSync.set({ source: options.manifests ? 'manifests' : 'api' }, Date.now() / 1000);
  });
  const auditor = new ConfigAuditor(audit, clock);
  const config = openConfigBackend(options, { index, auditor, clock, logger });
  isLeader = () => config.isLeader();
  config.observe(metrics);
  startup.setState('loading the configuration');
  await config.start();

  // Grant rate limits are shared by all replicas when they share a Redis.
  const redisLimiter = options.redis
    ? new RedisRateLimiter({ url: options.redis.url, timeoutMs: options.redis.appendTimeoutMs })
    : undefined;
  const limiter = redisLimiter ?? new MemoryRateLimiter();
  // So is the one use of each approval and confirmation token.
  const uses = options.redis
    ? new RedisOneTimeUses({ url: options.redis.url, timeoutMs: options.redis.appendTimeoutMs })
    : new MemoryOneTimeUses(clock);
  const settings = resolveEngineSettings({
    riskThreshold: options.riskThreshold,
    defaultOutcome: options.defaultOutcome,
  });
  const decisions = new DecisionService({
    masker,
    index,
    audit,
    limiter,
    settings,
    clock,
    pendingTtlSeconds: options.pendingTtlSeconds,
    uses,
    onShadowDecision: (shadow) =>
      metrics.policyShadow.inc({ policy: shadow.policy, would_be: shadow.outcome }),
    onDecision: (decided) =>
      metrics.tierDecisions.count([decided.outcome, decidingTier(decided.evaluation) ?? 'none']),
  });
  // Every replica knows what waits (for listing); the leader expires what is overdue.
  const pending = new PendingReviews();
  const stopFeedingPending = audit.subscribe((entry) => pending.observe(entry));
  startup.setState('reading the decisions waiting for review');
  await pending.seed(audit, clock(), options.pendingTtlSeconds);
  metrics.observePending(() => pending.size);
  const claims = options.redis
    ? new RedisClaims(options.redis.url, `${DEFAULT_KEY_PREFIX}:claims`)
    : new LocalClaims();
  const expiries = new ExpirySweeper({
    pending,
    claims,
    recordExpiry: (id) => decisions.recordExpiry(id),
    clock,
    isLeader: () => config.isLeader(),
    logger,
    intervalMs: EXPIRY_SWEEP_MS,
    onExpired: () => metrics.decisionsExpired.inc(),
  });
  expiries.start();
  if (options.notify) {
    notifier = await openNotifier(options, options.notify, {
      audit,
      isLeader: () => config.isLeader(),
      onLeadership: (listener) => config.onLeadership(listener),
      clock,
      logger,
      onResult: (type, result) => metrics.notifications.inc({ type, result }),
    });
    notifier.start();
    // Before the first request: a receiver seen for the first time is told from the head at
    // activation on, which must not already hold decisions made after the start.
    startup.setState('starting notifications');
    await notifier.whenSettled();
    if (startupBreak) notifier.chainBroken(startupBreak);
  }
  // Decisions on requests Arbiter stands in the path of: Kubernetes API requests, MCP tool calls.
  const inPath = new InPathDecisions({
    index,
    audit,
    limiter,
    settings,
    clock,
    recorder: decisions.recorder,
    uses,
  });
  const toolProxy = options.mcp
    ? new ToolProxy(
        {
          tools: new GovernedToolCalls({
            decisions: inPath,
            executions: decisions.recorder,
            clock,
            index,
            metrics,
            logger: logger.child({ component: 'tool-proxy' }),
            pins: new ToolPins(
              new ToolDefinitions(clock),
              new DefinitionChanges({
                audit,
                uses,
                metrics,
                clock,
                logger: logger.child({ component: 'tool-proxy' }),
                status: config.toolDefinitionStatus,
              }),
            ),
            ...(await readReceiptSigning(options)),
          }),
          index,
          sessions: openMcpSessions(options, clock),
          logger: logger.child({ component: 'tool-proxy' }),
          clock,
        },
        { ...options.mcp, ...MCP_SESSION_BOUNDS, version: VERSION },
      )
    : undefined;
  const admission = options.kubernetes?.admission
    ? openAdmission({
        options: options.kubernetes.admission,
        kubeConfig: loadKubeConfig(options.kubernetes),
        namespace: options.kubernetes.lease.namespace,
        host: options.host,
        index,
        decisions: inPath,
        ready: () => config.readiness.check().ready,
        isLeader: () => config.isLeader(),
        onLeadership: (listener) => config.onLeadership(listener),
        metrics,
        logger,
        clock,
        closeGraceMs: options.shutdownGraceSeconds * 1000,
      })
    : undefined;
  if (admission) {
    startup.setState('starting the admission webhooks');
    await admission.start();
  }
  let draining = false;
  const shuttingDown = new AbortController();
  const api = createApiListener({
    logger,
    index,
    audit,
    archiver: new AuditArchiver(
      audit,
      options.auditArchiveDir,
      governanceKeepers(audit, clock, options.pendingTtlSeconds),
    ),
    decisions,
    pending,
    config: config.writer,
    authenticator,
    keyLimiter: new KeyRateLimiter(options.keyRateLimit.requestsPerSecond, options.keyRateLimit.burst),
    readiness: [
      {
        name: 'shutdown',
        check: () => (draining ? { ready: false, message: 'shutting down' } : { ready: true }),
      },
      config.readiness,
      {
        name: 'audit',
        check: () =>
          lastRollback
            ? {
                ready: true,
                message: `audit entries ${lastRollback.lost_from_seq}..${lastRollback.lost_to_seq} were lost from Redis at ${lastRollback.detected_at} (see /api/v1/audit/verify)`,
              }
            : { ready: true },
      },
    ],
    clock,
    version: VERSION,
    metrics,
    shutdown: shuttingDown.signal,
    ...(toolProxy ? { toolProxy } : {}),
  });

  startup.serve(api);
  logger.info(
    { port, host: options.host, manifests: options.manifests, data_dir: options.dataDir },
    `arbiter listening on port ${port}`,
  );

  let closing: Promise<void> | undefined;
  const shutdown = (reason: string) => {
    closing ??= (async () => {
      draining = true;
      shuttingDown.abort();
      clearInterval(verifier);
      logger.info({ reason }, 'shutting down: draining requests');
      // MCP requests are refused from now on; tool calls in flight finish and record their
      // execution before the audit log closes.
      const proxyClosed = toolProxy?.close();
      // Keep-alive connections turn idle as their last response goes out: close them as they do.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const forced = setTimeout(() => server.closeAllConnections(), options.shutdownGraceSeconds * 1000);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearInterval(sweeper);
      clearTimeout(forced);
      // Admission answers to the end: the API server keeps calling until this replica is gone.
      await admission?.close();
      await proxyClosed;
      await expiries.stop();
      await claims.close();
      await notifier?.stop();
      stopFeedingPending();
      await config.close();
      await audit.close();
      await redisLimiter?.close();
      await uses.close();
      logger.info('shutdown complete: audit log flushed');
    })();
    return closing;
  };
  return { server, port, logger, shutdown, admissionPort: () => admission?.port() };
}

const MCP_SESSION_BOUNDS = { idleMs: DEFAULT_IDLE_MS, maxSessions: DEFAULT_MAX_SESSIONS };

/** 2025-11-25 MCP sessions: in Redis when replicas share one, so that any replica serves them. */
function openMcpSessions(options: ServeOptions, clock: () => Date): McpSessions {
  return options.redis
    ? new RedisMcpSessions(
        { url: options.redis.url, timeoutMs: options.redis.appendTimeoutMs, ...MCP_SESSION_BOUNDS },
        clock,
      )
    : new MemoryMcpSessions(MCP_SESSION_BOUNDS, clock);
}

export async function serve(options: ServeOptions): Promise<void> {
  boundHeapGrowth(); // the process is ours: tune its heap before the configuration loads
  const logger = pino(
    {
      level: options.logLevel,
      base: { service: 'arbiter' },
      redact: ['req.headers.authorization'],
    },
    asyncLogDestination(1),
  );
  const running = await startServer(options, logger);
  relaxHeapGrowthIfSmall();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      running.shutdown(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
