import type { AuditEntry } from '../audit-log.js';
import { storedBytes } from '../chain.js';
import { parseEntryLine } from '../entry-shape.js';
import { filterValue } from '../query-match.js';
import { INDEXED_FIELDS, type RedisAuditKeys } from './redis-keys.js';

/** Field of a stream entry that holds the entry as JSON. */
export const ENTRY_FIELD = 'entry';

/**
 * The stored form (chain.ts storedText) in UTF-8: verification can hash it as stored.
 * Bytes, so that the script call carries them as they are instead of copying the text.
 */
export function encodeEntry(entry: AuditEntry): Buffer {
  return storedBytes(entry);
}

/** Parses a stored entry; returns a reason instead when it is not one (a tampered stream). */
export function decodeEntry(json: string): AuditEntry | { invalid: string } {
  const parsed = parseEntryLine(json);
  return parsed.kind === 'entry' ? parsed.entry : { invalid: `stored entry: ${parsed.reason}` };
}

/** Decodes or throws: for reads, where a malformed entry is a storage fault. */
export function decodeEntryOrThrow(json: string): AuditEntry {
  const decoded = decodeEntry(json);
  if ('invalid' in decoded) throw new Error(decoded.invalid);
  return decoded;
}

const ENTRY_FIELD_BYTES = Buffer.from(ENTRY_FIELD);

/** The `entry` field of an XRANGE or XREAD item's flat [field, value, ...] list, as text or as bytes. */
export function entryField<T extends string | Buffer>(fields: readonly T[]): T | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    if (typeof name === 'string' ? name === ENTRY_FIELD : name.equals(ENTRY_FIELD_BYTES))
      return fields[i + 1];
  }
  return undefined;
}

/** The entry a stream item's fields hold; undefined when they hold none (a tampered stream). */
export function storedEntry(fields: readonly string[]): AuditEntry | undefined {
  // Stryker disable next-line StringLiteral: no field and any other text that is no entry read alike.
  const entry = decodeEntry(entryField(fields) ?? '');
  return 'invalid' in entry ? undefined : entry;
}

/** The equality index keys an entry belongs to (null fields are not indexed). */
export function indexKeysOf(keys: RedisAuditKeys, entry: AuditEntry): string[] {
  const out: string[] = [];
  for (const field of INDEXED_FIELDS) {
    const value = filterValue(entry, field);
    if (value !== null) out.push(keys.index(field, value));
  }
  return out;
}
