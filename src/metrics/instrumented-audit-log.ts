import type { AuditEntry, AuditEventInput, AuditLog, VerifyReport } from '../audit/audit-log.js';
import type { Metrics } from './metrics.js';

/** Wraps any audit backend to time appends, count failures and publish verification results. */
export function instrumentAuditLog(audit: AuditLog, metrics: Metrics): AuditLog {
  return {
    // then() rather than an async function: 0.2 KB less garbage on every append.
    append(event: AuditEventInput): Promise<AuditEntry> {
      const started = performance.now();
      const timed = () => metrics.auditAppendSeconds.observe((performance.now() - started) / 1000);
      return audit.append(event).then(
        (entry) => {
          timed();
          return entry;
        },
        (err: unknown) => {
          metrics.auditAppendFailures.inc();
          timed();
          throw err;
        },
      );
    },
    async verify(): Promise<VerifyReport> {
      const report = await audit.verify();
      metrics.chainVerified.set(report.ok ? 1 : 0);
      metrics.chainVerifiedAt.set(Date.now() / 1000);
      return report;
    },
    query: (q) => audit.query(q),
    get: (id) => audit.get(id),
    byDecision: (id) => audit.byDecision(id),
    isVerified: (seq) => audit.isVerified(seq),
    head: () => audit.head(),
    tree: () => audit.tree(),
    checkpoints: () => audit.checkpoints(),
    retained: () => audit.retained(),
    trim: (anchor) => audit.trim(anchor),
    subscribe: (listener) => audit.subscribe(listener),
    close: () => audit.close(),
  };
}
