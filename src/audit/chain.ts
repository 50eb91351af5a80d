import { hash } from 'node:crypto';
import type { AuditEntry } from './audit-log.js';

/**
 * RFC 8785 canonical JSON of a value: keys sorted by UTF-16 code units, numbers and
 * strings as ECMAScript's JSON.stringify writes them. Same output as the `canonicalize`
 * package (canonical-json.test.ts checks). Every append seals with it, so whatever part of
 * the value already has its members in canonical order is written by JSON.stringify
 * (native, and then exactly canonical); only the rest is written here.
 */
export function canonicalJson(value: unknown): string {
  const text = serialise(value);
  if (text === undefined) throw new TypeError('value is not serialisable as JSON');
  return text;
}

/**
 * Whether JSON.stringify writes this object or array exactly as canonicalJson would: every
 * object's own members in canonical order, no integer-like keys (JavaScript enumerates
 * those first, whatever the order), no toJSON, no non-finite numbers (canonicalJson
 * refuses them; JSON.stringify would write null). Stops at the first reason it does not.
 */
function stringifiesCanonically(value: object): boolean {
  if (Array.isArray(value)) {
    for (const item of value) if (!memberStringifiesCanonically(item)) return false;
    return true;
  }
  if (hasToJson(value)) return false;
  const record = value as Record<string, unknown>;
  // This object's own order first: a disordered parent is found without walking its members.
  let previous: string | undefined;
  for (const key in record) {
    if (!keepsCanonicalPlace(record, key)) return false;
    if (previous !== undefined && key < previous) return false;
    previous = key;
  }
  for (const key in record) if (!memberStringifiesCanonically(record[key])) return false;
  return true;
}

function memberStringifiesCanonically(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value !== 'object' || value === null || stringifiesCanonically(value);
}

/**
 * A value with every object's members in canonical order, so that canonicalJson can hand
 * all of it to JSON.stringify: the same objects where they already are, sorted copies where
 * not. Values no object can hold in that order (integer-like keys, a member named
 * __proto__, toJSON) are returned as they are; canonicalJson writes those by hand.
 */
export function withCanonicalOrder<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return arrayInCanonicalOrder(value) as T;
  if (hasToJson(value)) return value;
  return objectInCanonicalOrder(value as Record<string, unknown>) as T;
}

function arrayInCanonicalOrder(items: unknown[]): unknown[] {
  let copy: unknown[] | undefined;
  items.forEach((item, i) => {
    const ordered = withCanonicalOrder(item);
    if (ordered !== item) (copy ??= [...items])[i] = ordered;
  });
  return copy ?? items;
}

function objectInCanonicalOrder(record: Record<string, unknown>): Record<string, unknown> {
  // Most objects are in order already, and nothing is allocated for those.
  let inOrder = true;
  let previous: string | undefined;
  let reordered: Map<string, unknown> | undefined; // members that were copied into order
  for (const key in record) {
    if (!keepsCanonicalPlace(record, key)) return record;
    if (previous !== undefined && key < previous) inOrder = false;
    previous = key;
    const member = withCanonicalOrder(record[key]);
    if (member !== record[key]) (reordered ??= new Map()).set(key, member);
  }
  if (inOrder && !reordered) return record;
  const copy: Record<string, unknown> = {};
  for (const key of sortKeys(Object.keys(record))) {
    copy[key] = reordered?.has(key) ? reordered.get(key) : record[key];
  }
  return copy;
}

/**
 * The keys in ascending order. Short lists by insertion: Array.prototype.sort allocates
 * over a kilobyte of work space per call, and a proposal's objects have a few keys each.
 */
function sortKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i;
    for (; j > 0 && keys[j - 1]! > key; j--) keys[j] = keys[j - 1]!;
    keys[j] = key;
  }
  return keys;
}

/**
 * Throws what canonicalJson would throw for this value (a non-finite number, a BigInt,
 * nothing at all), without writing it: appends check their event with it before it joins a
 * batch, where it would fail every other entry of the batch too.
 */
export function assertCanonicalisable(value: unknown): void {
  if (!canonicalisable(value)) canonicalJson(value);
}

function canonicalisable(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      if (value === null) return true;
      if (Array.isArray(value)) return value.every((item) => item === undefined || canonicalisable(item));
      if (hasToJson(value)) return false;
      for (const key in value) {
        const member = (value as Record<string, unknown>)[key];
        if (member !== undefined && !canonicalisable(member)) return false;
      }
      return true;
    default:
      return false;
  }
}

function ascending(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i]! < keys[i - 1]!) return false;
  return true;
}

/**
 * Whether an object can hold this member at its canonical place: own (JSON.stringify skips
 * inherited ones), not integer-like (JavaScript enumerates those first, whatever the
 * order; a leading digit is the cheap, cautious test), and not __proto__ (assigning it to
 * a copy would set the prototype instead).
 */
function keepsCanonicalPlace(record: object, key: string): boolean {
  const first = key.charCodeAt(0);
  return Object.hasOwn(record, key) && !(first >= 48 && first <= 57) && key !== '__proto__';
}

function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

// Characters JSON.stringify would escape (or, for surrogates, may): only those strings take the slow path.
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

function serialiseString(text: string): string {
  return NEEDS_ESCAPING.test(text) ? JSON.stringify(text) : `"${text}"`;
}

function serialise(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return serialiseString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} is not allowed in canonical JSON`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('BigInt is not allowed in canonical JSON');
    case 'object':
      return value === null ? 'null' : serialiseObject(value);
    default:
      return undefined; // undefined, functions and symbols: left out, as JSON.stringify does
  }
}

function serialiseObject(value: object): string | undefined {
  if (stringifiesCanonically(value)) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? ',' : ''}${serialise(value[i]) ?? 'null'}`;
    return `${out}]`;
  }
  if (hasToJson(value)) return serialise(value.toJSON());
  const record = value as Record<string, unknown>;
  let out = '';
  const keys = Object.keys(record);
  if (!ascending(keys)) keys.sort();
  for (const key of keys) {
    const member = serialise(record[key]);
    if (member !== undefined) out += `${out.length > 0 ? ',' : ''}${serialiseString(key)}:${member}`;
  }
  return `{${out}}`;
}

/** previous_hash of the first entry (semantics.md, "Audit log"). */
export const GENESIS_HASH = `sha256:${'0'.repeat(64)}`;

/**
 * `sha256:` + hex SHA-256 of the RFC 8785 (JCS) canonical JSON of the entry without
 * its `hash` field. This is the whole recipe: an export can be re-verified with it alone.
 */
export function hashEntry(entry: Omit<AuditEntry, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...content } = entry;
  return hashOf(canonicalJson(content));
}

function hashOf(canonical: string): string {
  return `sha256:${hash('sha256', canonical, 'hex')}`;
}

// The canonical text each sealed entry was hashed over, so storing it costs a splice, not a second serialisation.
const sealedText = new WeakMap<AuditEntry, string>();

/** Links a new entry after `previous` (or genesis) and seals it with its hash. */
export function sealEntry(
  content: Omit<AuditEntry, 'hash' | 'previous_hash' | 'seq'>,
  previous: { seq: number; hash: string } | null,
): AuditEntry {
  const linked = linkedInCanonicalOrder(content, (previous?.seq ?? 0) + 1, previous?.hash ?? GENESIS_HASH);
  const canonical = canonicalJson(linked);
  const entry = { ...linked, hash: hashOf(canonical) };
  sealedText.set(entry, canonical);
  return entry;
}

type EntryContent = Omit<AuditEntry, 'hash' | 'previous_hash' | 'seq'>;

/** The members of an entry's content: every field of AuditEventInput, and id. */
const CONTENT_MEMBERS = new Set([
  'actor_id',
  'capability',
  'data',
  'decision_id',
  'event_type',
  'id',
  'outcome',
  'policies_evaluated',
  'policy_matched',
  'risk_score',
  'timestamp',
]);

/**
 * The entry without its hash, members in canonical order so that canonicalJson need not
 * sort them. Content with other members than an entry's is linked as it is.
 */
function linkedInCanonicalOrder(content: EntryContent, seq: number, previousHash: string) {
  let members = 0;
  for (const key in content) {
    if (!CONTENT_MEMBERS.has(key)) return { ...content, seq, previous_hash: previousHash };
    members++;
  }
  if (members !== CONTENT_MEMBERS.size) return { ...content, seq, previous_hash: previousHash };
  return {
    actor_id: content.actor_id,
    capability: content.capability,
    data: content.data,
    decision_id: content.decision_id,
    event_type: content.event_type,
    id: content.id,
    outcome: content.outcome,
    policies_evaluated: content.policies_evaluated,
    policy_matched: content.policy_matched,
    previous_hash: previousHash,
    risk_score: content.risk_score,
    seq,
    timestamp: content.timestamp,
  };
}

/**
 * The Merkle leaf input of an entry: the canonical JSON its `hash` was computed from
 * (the entry without `hash`). Cached for entries sealed in this process.
 */
export function leafInput(entry: AuditEntry): string {
  const cached = sealedText.get(entry);
  if (cached !== undefined) return cached;
  const { hash: _ignored, ...content } = entry;
  return canonicalJson(content);
}

/** leafInput in UTF-8: the tree hashes it as bytes, which copies no text on the heap. */
export function leafInputBytes(entry: AuditEntry): Buffer {
  return Buffer.from(leafInput(entry), 'utf8');
}

/**
 * The form entries are stored and exported in: the canonical JSON of the whole entry,
 * `hash` included. Its bytes without the `hash` member are exactly what was hashed, so a
 * verifier can hash them as stored (sealed-link.ts) instead of parsing and re-serialising.
 */
export function storedText(entry: AuditEntry): string {
  const canonical = sealedText.get(entry);
  const at = hashPlace(entry, canonical);
  if (canonical === undefined || at < 0) return canonicalJson(entry);
  return `${canonical.slice(0, at)}${hashMember(entry)}${canonical.slice(at)}`;
}

/**
 * storedText(entry) in UTF-8, written from the canonical text and the hash member as they
 * are: joining them into one string first would copy the entry once more on the heap.
 */
export function storedBytes(entry: AuditEntry): Buffer {
  const canonical = sealedText.get(entry);
  const at = hashPlace(entry, canonical);
  if (canonical === undefined || at < 0) return Buffer.from(canonicalJson(entry), 'utf8');
  const member = hashMember(entry);
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(canonical, 'utf8') + Buffer.byteLength(member, 'utf8'));
  let offset = bytes.write(canonical.slice(0, at), 'utf8');
  offset += bytes.write(member, offset, 'utf8');
  bytes.write(canonical.slice(at), offset, 'utf8');
  return bytes;
}

function hashMember(entry: AuditEntry): string {
  return `,"hash":${JSON.stringify(entry.hash)}`;
}

/**
 * Where the hash member goes into the canonical text the entry was sealed over (this
 * process sealed it); -1 when it was not, or the member cannot be placed there.
 */
function hashPlace(entry: AuditEntry, canonical: string | undefined): number {
  if (canonical === undefined) return -1;
  // The members after `hash` in key order: when they hold no objects, the first of them
  // is the last place its key appears in the text (quotes inside strings are escaped).
  const members = entry as unknown as Record<string, unknown>;
  let first: string | undefined;
  for (const key in members) {
    if (key <= 'hash') continue;
    if (!isFlat(members[key])) return -1;
    if (first === undefined || key < first) first = key;
  }
  return first === undefined ? canonical.length - 1 : canonical.lastIndexOf(`,"${first}":`);
}

function isFlat(value: unknown): boolean {
  if (Array.isArray(value)) return value.every((item) => typeof item !== 'object' || item === null);
  return typeof value !== 'object' || value === null;
}
