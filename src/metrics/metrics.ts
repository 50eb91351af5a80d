import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of one process. Labels stay bounded: outcomes and capability names
 * of the index (a proposal for an unregistered capability counts as "unregistered"),
 * never actor ids.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly decisions = new Counter({
    name: 'arbiter_decisions_total',
    help: 'Governance decisions by outcome and capability',
    labelNames: ['outcome', 'capability'] as const,
    registers: [this.registry],
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
  });
  readonly watchBroken = new Gauge({
    name: 'arbiter_watch_broken',
    help: '1 while the watch of this kind has been broken for longer than the alert threshold',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'arbiter_leader',
    help: '1 when this replica holds the leader Lease',
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'arbiter_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'arbiter_' });
  }
}
