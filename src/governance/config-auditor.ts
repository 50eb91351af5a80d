import type { AuditLog } from '../audit/audit-log.js';
import { objectKey, type ConfigObject } from '../model/index.js';
import { readAuditedConfiguration } from './audited-configuration.js';
import { configChanges } from './config-changes.js';

/** Configuration events in flight at once. */
const APPEND_WINDOW = 500;

/**
 * Records configuration changes in the audit log, once each: it remembers the last
 * audited state of every object, rebuilt at start from the log (its configuration events
 * after the newest config.snapshot that archiving left), so a restart does not record
 * unchanged objects again.
 */
export class ConfigAuditor {
  private audited = new Map<string, ConfigObject>();

  constructor(
    private readonly audit: AuditLog,
    private readonly clock: () => Date,
  ) {}

  async restore(): Promise<void> {
    this.audited = (await readAuditedConfiguration(this.audit)).objects;
  }

  /**
   * Appends the events that lead from the audited state to `objects`; the state moves
   * only once all of them are stored. Rejects (fail-closed) when the log is unavailable.
   */
  async record(
    objects: readonly ConfigObject[],
    fallbackCaller: string,
    deletedBy?: (key: string) => string | undefined,
  ): Promise<number> {
    const changes = configChanges([...this.audited.values()], objects, fallbackCaller, deletedBy);
    const timestamp = this.clock().toISOString();
    // A window at a time, in order: group commit stores each window in one write (21,000
    // objects at first start took 40 s of fsyncs one by one), while no append waits in a
    // queue long enough to time out. Each window settles before the next or a failure.
    // Stryker disable next-line EqualityOperator: one more, empty window appends nothing
    for (let start = 0; start < changes.length; start += APPEND_WINDOW) {
      const window = changes.slice(start, start + APPEND_WINDOW);
      const stored = await Promise.allSettled(
        window.map((change) =>
          this.audit.append({
            event_type: change.event_type,
            timestamp,
            actor_id: change.actor_id,
            capability: change.capability,
            outcome: null,
            risk_score: null,
            decision_id: null,
            policies_evaluated: [],
            policy_matched: null,
            data: { ...change.data },
            ...(change.namespace !== undefined ? { namespace: change.namespace } : {}),
          }),
        ),
      );
      const failure = stored.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    }
    this.audited = new Map(objects.map((o) => [objectKey(o), o]));
    return changes.length;
  }
}
