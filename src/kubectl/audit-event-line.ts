import { entryNamespace } from '../audit/entry-namespace.js';

/** The fields of an audit entry (entryView in src/api/routes/audit.ts) a tail line shows. */
interface AuditEntryView {
  seq?: number;
  timestamp?: string;
  event_type?: string;
  actor_id?: string | null;
  capability?: string | null;
  outcome?: string | null;
  decision_id?: string | null;
  namespace?: string;
}

const LABELLED_FIELDS = [
  ['actor', 'actor_id'],
  ['capability', 'capability'],
  ['outcome', 'outcome'],
  ['decision', 'decision_id'],
] as const;

/**
 * One entry of `audit tail` as a line that greps well:
 * `2026-11-24T12:35:11.906Z  #14  governance.decision  actor=agent-001 capability=... decision=...`.
 * The JSON is kept whole when it is not an entry.
 */
export function auditEventLine(data: string, withNamespace = false): string {
  let entry: AuditEntryView;
  try {
    entry = JSON.parse(data) as AuditEntryView;
  } catch {
    return data;
  }
  const labelled = LABELLED_FIELDS.filter(([, key]) => entry[key] !== null && entry[key] !== undefined).map(
    ([label, key]) => `${label}=${entry[key]}`,
  );
  // -A: the entry's namespace first (entry-namespace.ts).
  const namespace = withNamespace ? entryNamespace(entry) : null;
  if (namespace !== null) labelled.unshift(`namespace=${namespace}`);
  return [entry.timestamp, `#${entry.seq}`, entry.event_type, labelled.join(' ')]
    .filter((part) => part !== undefined && part !== '')
    .join('  ');
}
