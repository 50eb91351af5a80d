import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { AuditEntry } from './audit-log.js';

// The package is CommonJS with ESM-style typings: at run time the default import is the function itself.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** RFC 8785 canonical JSON of a value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value is not serialisable as JSON');
  return text;
}

/** previous_hash of the first entry (semantics.md, "Audit log"). */
export const GENESIS_HASH = `sha256:${'0'.repeat(64)}`;

/**
 * `sha256:` + hex SHA-256 of the RFC 8785 (JCS) canonical JSON of the entry without
 * its `hash` field. This is the whole recipe: an export can be re-verified with it alone.
 */
export function hashEntry(entry: Omit<AuditEntry, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...content } = entry;
  const canonical = canonicalJson(content);
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

/** Links a new entry after `previous` (or genesis) and seals it with its hash. */
export function sealEntry(
  content: Omit<AuditEntry, 'hash' | 'previous_hash' | 'seq'>,
  previous: { seq: number; hash: string } | null,
): AuditEntry {
  const linked = { ...content, seq: (previous?.seq ?? 0) + 1, previous_hash: previous?.hash ?? GENESIS_HASH };
  return { ...linked, hash: hashEntry(linked) };
}
