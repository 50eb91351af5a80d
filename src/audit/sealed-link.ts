import { hash } from 'node:crypto';

/** The chain fields of a stored entry. */
export interface SealedLink {
  seq: number;
  id: string;
  previous_hash: string;
  hash: string;
}

const HASH_MEMBER = ',"hash":"';

/**
 * Reads the chain fields of a stored entry without parsing it, when its bytes prove
 * themselves: the text minus its top-level `hash` member must hash to that member's
 * value. Returns undefined when they do not (an entry stored in another byte form, or
 * one that was altered); the caller then parses, re-canonicalises and names the break.
 *
 * Why this is as strong as the full check: the sealer hashed the canonical text, so text
 * that hashes to the same value is that text (SHA-256 second preimages being out of
 * reach), and the member is proven top-level because what follows it is a flat run of
 * members closing the outermost object. An entry whose hash was replaced along with its
 * bytes fails the link to its successor or to a checkpoint, as under the full check.
 */
export function sealedLink(text: string): SealedLink | undefined {
  const proven = provenHash(text);
  if (proven === undefined) return undefined;
  // The bytes are the sealed ones, so the flat run after the member is canonical JSON:
  // these keys occur once, outside strings (whose quotes are escaped).
  const id = valueAfter(text, '"id":"', proven.end, '"');
  // previous_hash is followed only by risk_score, seq and timestamp: look near the end first.
  const nearEnd = Math.max(proven.end, text.length - LINK_WINDOW);
  const previousHash =
    valueAfter(text, '"previous_hash":"', nearEnd, '"') ??
    valueAfter(text, '"previous_hash":"', proven.end, '"');
  const seq = integerAfter(text, '"seq":', nearEnd);
  if (!Number.isSafeInteger(seq) || seq < 1 || id === undefined || previousHash === undefined)
    return undefined;
  return { seq, id, previous_hash: previousHash, hash: proven.hash };
}

/** The value of the top-level hash member when the rest of the text hashes to it, and where the member ends. */
function provenHash(text: string): { hash: string; end: number } | undefined {
  const at = memberNearEnd(text);
  if (at < 0) return undefined;
  const valueStart = at + HASH_MEMBER.length;
  const valueEnd = text.indexOf('"', valueStart);
  if (valueEnd < 0 || text.charCodeAt(valueEnd + 1) !== COMMA) return undefined;
  // Flat: no object opens or closes between the member and the final brace.
  const close = text.indexOf('}', valueEnd);
  if (close !== text.length - 1 || text.indexOf('{', valueEnd) >= 0) return undefined;
  const hash = `${HASH_PREFIX}${sha256Hex(text.slice(0, at) + text.slice(valueEnd + 1))}`;
  if (valueEnd !== valueStart + hash.length || !text.startsWith(hash, valueStart)) return undefined;
  return { hash, end: valueEnd };
}

const COMMA = 0x2c;
const HASH_PREFIX = 'sha256:';
const CLOSING_BRACE = 0x7d;
const LINK_WINDOW = 256;
// The members after `hash` take about 300 characters: a forward search from there is far
// cheaper than lastIndexOf over the whole entry. Should it find a nested lookalike first
// (a short tail), the digest fails and the caller takes the full path: slower, as sound.
const TAIL_WINDOW = 512;

function memberNearEnd(text: string): number {
  const near = text.indexOf(HASH_MEMBER, Math.max(0, text.length - TAIL_WINDOW));
  return near >= 0 ? near : text.lastIndexOf(HASH_MEMBER);
}

function sha256Hex(data: string): string {
  return hash('sha256', data, 'hex');
}

/** The raw text after `key` (searched from `from`) up to the next `terminator`. */
function valueAfter(text: string, key: string, from: number, terminator: string): string | undefined {
  const start = text.indexOf(key, from);
  if (start < 0) return undefined;
  const end = text.indexOf(terminator, start + key.length);
  return end < 0 ? undefined : text.slice(start + key.length, end);
}

/** The digits after `key` as a number; NaN unless a member boundary follows them. */
function integerAfter(text: string, key: string, from: number): number {
  const start = text.indexOf(key, from);
  if (start < 0) return Number.NaN;
  let i = start + key.length;
  let value = 0;
  for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i))
    value = value * 10 + c - 0x30;
  const next = text.charCodeAt(i);
  return i > start + key.length && (next === COMMA || next === CLOSING_BRACE) ? value : Number.NaN;
}
