import { humanDuration } from './durations.js';
import { cellText, renderTable } from './table.js';

/** The fields of a decision (GET /governance/decisions/:id, decisionView) the table shows. */
export interface DecisionView {
  decision_id: string;
  /** The actor's namespace (`team-a/bot`); null for cluster actors; absent from older servers. */
  namespace?: string | null;
  outcome: string;
  reason: string;
  timestamp: string;
  audit: {
    status: string;
    expires_at: string | null;
    actor_id: string;
    capability: string;
  };
}

const HEADERS = ['ID', 'AGE', 'EXPIRES IN', 'ACTOR', 'CAPABILITY', 'OUTCOME', 'REASON'];

/**
 * `kubectl arbiter pending`: one row per decision waiting for review, in the server's
 * order; with `namespaceColumn` (-A) first the namespace, `-` for cluster actors.
 */
export function pendingTable(decisions: readonly DecisionView[], now: Date, namespaceColumn = false): string {
  const rows = decisions.map((d) => [
    d.decision_id,
    humanDuration(now.getTime() - Date.parse(d.timestamp)),
    expiresIn(d.audit.expires_at, now),
    cellText(d.audit.actor_id),
    cellText(d.audit.capability),
    d.outcome,
    cellText(d.reason),
  ]);
  if (!namespaceColumn) return renderTable(HEADERS, rows);
  return renderTable(
    ['NAMESPACE', ...HEADERS],
    rows.map((row, i) => [cellText(decisions[i]!.namespace ?? '-'), ...row]),
  );
}

/** The time left to review; `expired` once the deadline passed (the server expires it shortly). */
export function expiresIn(expiresAt: string | null, now: Date): string {
  if (expiresAt === null) return '-';
  const left = Date.parse(expiresAt) - now.getTime();
  return left > 0 ? humanDuration(left) : 'expired';
}
