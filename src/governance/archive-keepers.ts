import type { ArchiveKeepers } from '../audit/archiving/archive-keepers.js';
import type { AuditLog } from '../audit/audit-log.js';
import { carryAuditedConfiguration } from './audited-configuration.js';
import { oldestWaitingDecision } from './pending-reviews.js';

/**
 * What governance still needs of the entries an archive run would remove: decisions that
 * wait for review stay in the log (archiving stops before the oldest), and the audited
 * configuration is carried past the cut (config.snapshot entries).
 */
export function governanceKeepers(
  audit: AuditLog,
  clock: () => Date,
  /** The server's --pending-ttl: how far back a waiting decision may be. */
  pendingTtlSeconds: number,
): ArchiveKeepers {
  return {
    async oldestInUse() {
      const waiting = await oldestWaitingDecision(audit, clock(), pendingTtlSeconds);
      if (!waiting) return undefined;
      const deadline = new Date(waiting.expiresAtMs).toISOString();
      return {
        seq: waiting.seq,
        reason: `decision ${waiting.decisionId} waits for review (until ${deadline})`,
      };
    },
    carryOver: (cut, actor) => carryAuditedConfiguration(audit, { cutSeq: cut.seq, actor, clock }),
  };
}
