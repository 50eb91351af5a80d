import type { AuditEntry } from './audit-log.js';

export type ParsedLine = { kind: 'entry'; entry: AuditEntry } | { kind: 'invalid'; reason: string };

const STRING_FIELDS = ['id', 'hash', 'previous_hash', 'timestamp', 'event_type'] as const;

/**
 * Parses one JSON Lines record of the audit log or an export. Only the fields the chain
 * and the indexes rely on are checked; the hash covers the rest.
 */
export function parseEntryLine(text: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { kind: 'invalid', reason: `not valid JSON (${(err as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', reason: 'not a JSON object' };
  }
  const record = value as Record<string, unknown>;
  if (!Number.isSafeInteger(record.seq) || (record.seq as number) < 1) {
    return { kind: 'invalid', reason: 'seq is not a positive integer' };
  }
  const missing = STRING_FIELDS.find((field) => typeof record[field] !== 'string');
  if (missing) return { kind: 'invalid', reason: `${missing} is not a string` };
  return { kind: 'entry', entry: value as AuditEntry };
}
