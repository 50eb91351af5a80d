import type { Logger } from 'pino';
import type { AuditArchiver } from '../audit/archiving/audit-archiver-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { KeyRateLimiter } from '../auth/index.js';
import type { ConfigWriter } from '../governance/config-writer.js';
import type { DecisionService } from '../governance/decision-service.js';
import type { PendingReviews } from '../governance/pending-reviews.js';
import type { IndexSnapshot } from '../index/index.js';
import type { Metrics } from '../metrics/index.js';
import type { ToolProxy } from '../mcp/tool-proxy.js';
import type { Authenticator } from './authenticate.js';

/** A readiness check: a name and whether it holds now, with a reason when it does not. */
export interface ReadinessCheck {
  name: string;
  check(): { ready: boolean; message?: string };
}

/** Everything the HTTP API needs, built in cli/ and injected. */
export interface ApiDependencies {
  logger: Logger;
  index: { current(): IndexSnapshot };
  audit: AuditLog;
  /** POST /audit/archive: archives the oldest entries into its folder. */
  archiver: AuditArchiver;
  decisions: DecisionService;
  /** The decisions waiting for a reviewer. */
  pending: PendingReviews;
  config: ConfigWriter;
  authenticator: Authenticator;
  keyLimiter: KeyRateLimiter;
  readiness: ReadinessCheck[];
  clock: () => Date;
  version: string;
  metrics: Metrics;
  /** MCP at /mcp/<server>, when upstream MCP servers are configured (--mcp-server). */
  toolProxy?: ToolProxy;
  /** Aborted when the server starts shutting down: long-lived streams end then. */
  shutdown: AbortSignal;
}
