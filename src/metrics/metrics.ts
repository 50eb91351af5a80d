import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { Tally } from './tally.js';

/** What the Kubernetes controller lets metrics read at scrape time. */
export interface ControllerObservations {
  isLeader(): boolean;
  watchStatuses(): Array<{ kind: string; broken: boolean; restarts: number }>;
}

/**
 * Prometheus metrics of one process. Labels stay bounded: outcomes and capability names
 * of the index (a proposal for an unregistered capability counts as "unregistered"),
 * never actor ids.
 */
export class Metrics {
  readonly registry = new Registry();
  private controller: ControllerObservations | undefined;
  /** Restarts already counted per kind, so the counter only ever adds the difference. */
  private readonly restartsSeen = new Map<string, number>();
  /** Decisions by outcome and capability, counted per request (see Tally). */
  readonly decisions = new Tally(['outcome', 'capability'] as const);
  private readonly decisionsCounter: Counter<'outcome' | 'capability'> = new Counter({
    name: 'arbiter_decisions_total',
    help: 'Governance decisions by outcome and capability',
    labelNames: ['outcome', 'capability'] as const,
    registers: [this.registry],
    collect: (): void => this.decisions.publishTo(this.decisionsCounter),
  });
  /**
   * Decisions by outcome and the tier that decided (cluster, namespace; none when denied
   * before any policy was asked), of every source. No namespace label: the series stay few.
   */
  readonly tierDecisions = new Tally(['outcome', 'tier'] as const);
  private readonly tierDecisionsCounter: Counter<'outcome' | 'tier'> = new Counter({
    name: 'arbiter_tier_decisions_total',
    help: 'Governance decisions by outcome and the tier whose policies decided (cluster, namespace, none)',
    labelNames: ['outcome', 'tier'] as const,
    registers: [this.registry],
    collect: (): void => this.tierDecisions.publishTo(this.tierDecisionsCounter),
  });
  readonly decisionSeconds = new Histogram({
    name: 'arbiter_decision_duration_seconds',
    help: 'Time to decide a proposal, audit append included',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly auditAppendSeconds = new Histogram({
    name: 'arbiter_audit_append_duration_seconds',
    help: 'Time until an audit entry is durably stored',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
    registers: [this.registry],
  });
  readonly auditAppendFailures = new Counter({
    name: 'arbiter_audit_append_failures_total',
    help: 'Audit appends that failed (the request failed closed)',
    registers: [this.registry],
  });
  readonly checkpointSigningRefusals = new Counter({
    name: 'arbiter_audit_checkpoint_signing_refusals_total',
    help: 'Checkpoints left unsigned because the tree does not extend the last signed one (a rewritten log)',
    registers: [this.registry],
  });
  readonly checkpointSigningUnavailable = new Counter({
    name: 'arbiter_audit_checkpoint_signing_unavailable_total',
    help: 'Checkpoints left unsigned because the tree could not be read to check them (Redis or the disk down): an outage, not a rewritten log',
    registers: [this.registry],
  });
  readonly auditRollbackDetected = new Gauge({
    name: 'arbiter_audit_rollback_detected',
    help: 'Set to 1 once this replica found audit entries it had stored gone from Redis (a failover without WAIT); see /api/v1/audit/verify',
    registers: [this.registry],
  });
  readonly witnessFailures = new Counter({
    name: 'arbiter_audit_witness_failures_total',
    help: 'Signed checkpoints a witness did not cosign; reason "refused" means it saw another history',
    labelNames: ['witness', 'reason'] as const,
    registers: [this.registry],
  });
  readonly decisionsExpired = new Counter({
    name: 'arbiter_decisions_expired_total',
    help: 'Pending decisions whose deadline passed before anyone reviewed them (expiries written)',
    registers: [this.registry],
  });
  /** How many decisions wait for a reviewer, read at scrape time. */
  private pendingCount: (() => number) | undefined;
  readonly pendingDecisions = new Gauge({
    name: 'arbiter_pending_decisions',
    help: 'ESCALATE and REQUIRE_CONFIRMATION decisions waiting for a reviewer',
    registers: [this.registry],
    collect: () => {
      if (this.pendingCount) this.pendingDecisions.set(this.pendingCount());
    },
  });
  readonly notifications = new Counter({
    name: 'arbiter_notifications_total',
    help: 'Notification deliveries by event type and result (delivered, retried, dropped after the retry window)',
    labelNames: ['type', 'result'] as const,
    registers: [this.registry],
  });
  readonly chainVerified = new Gauge({
    name: 'arbiter_audit_chain_verified',
    help: '1 when the last verification of the whole audit chain succeeded, 0 when it found a break',
    registers: [this.registry],
  });
  readonly chainVerifiedAt = new Gauge({
    name: 'arbiter_audit_chain_last_verification_timestamp_seconds',
    help: 'When the audit chain was last verified',
    registers: [this.registry],
  });
  readonly indexObjects = new Gauge({
    name: 'arbiter_index_objects',
    help: 'Objects in the current index by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly indexNotReady = new Gauge({
    name: 'arbiter_index_objects_not_ready',
    help: 'Configuration objects whose Ready condition is False',
    registers: [this.registry],
  });
  readonly lastSync = new Gauge({
    name: 'arbiter_index_last_sync_timestamp_seconds',
    help: 'When the index last took in a change of this kind of source',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'arbiter_watch_restarts_total',
    help: 'Restarts of Kubernetes watches by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { kind, restarts } of this.controller?.watchStatuses() ?? []) {
        const delta = restarts - (this.restartsSeen.get(kind) ?? 0);
        if (delta > 0) this.watchRestarts.inc({ kind }, delta);
        this.restartsSeen.set(kind, restarts);
      }
    },
  });
  readonly watchBroken = new Gauge({
    name: 'arbiter_watch_broken',
    help: '1 while the watch of this kind is broken and the last good index is served',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { kind, broken } of this.controller?.watchStatuses() ?? [])
        this.watchBroken.set({ kind }, broken ? 1 : 0);
    },
  });
  readonly leader = new Gauge({
    name: 'arbiter_leader',
    help: '1 when this replica holds the leader Lease (always 1 without a cluster)',
    registers: [this.registry],
    collect: () => {
      this.leader.set(this.controller === undefined || this.controller.isLeader() ? 1 : 0);
    },
  });
  /** HTTP requests by method, route and status code, counted per request (see Tally). */
  readonly httpRequests = new Tally(['method', 'route', 'status'] as const);
  private readonly httpRequestsCounter: Counter<'method' | 'route' | 'status'> = new Counter({
    name: 'arbiter_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
    collect: (): void => this.httpRequests.publishTo(this.httpRequestsCounter),
  });

  readonly policyShadow = new Counter({
    name: 'arbiter_policy_shadow_total',
    help: 'Decisions a warn- or audit-mode policy would have changed, by policy and the outcome it would have given',
    labelNames: ['policy', 'would_be'] as const,
    registers: [this.registry],
  });
  readonly admissionRequests = new Counter({
    name: 'arbiter_admission_requests_total',
    help:
      'AdmissionReviews answered, by webhook (configuration, governance), operation and outcome ' +
      '(a decision outcome, not_governed, allowed, refused or error)',
    labelNames: ['webhook', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly admissionSeconds = new Histogram({
    name: 'arbiter_admission_duration_seconds',
    help: 'Time to answer an AdmissionReview, from its parsed body to the answer (decision and audit append included)',
    labelNames: ['webhook'] as const,
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly mcpToolCalls = new Counter({
    name: 'arbiter_mcp_tool_calls_total',
    help:
      'MCP tool calls through the tool proxy, by upstream server and result ' +
      '(completed, failed: forwarded; denied, pending: not forwarded; error: no decision could be recorded, or no receipt signed)',
    labelNames: ['server', 'result'] as const,
    registers: [this.registry],
  });
  readonly mcpToolDefinitionChanges = new Counter({
    name: 'arbiter_mcp_tool_definition_changes_total',
    help:
      'MCP tool definitions found changed from their pin and recorded (mcp.tool.changed), ' +
      'by upstream server and tool; across replicas each change counts once',
    labelNames: ['server', 'tool'] as const,
    registers: [this.registry],
  });
  readonly mcpUpstreamSeconds = new Histogram({
    name: 'arbiter_mcp_upstream_duration_seconds',
    help: 'Time an upstream MCP server took to answer a forwarded tool call',
    labelNames: ['server'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10, 30],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'arbiter_' });
  }

  observeController(controller: ControllerObservations): void {
    this.controller = controller;
  }

  /** Where arbiter_pending_decisions reads its value at scrape time. */
  observePending(count: () => number): void {
    this.pendingCount = count;
  }
}
