import { hash } from 'node:crypto';

/** The chain fields of a stored entry. */
export interface SealedLink {
  seq: number;
  id: string;
  previous_hash: string;
  hash: string;
}

const HASH_PREFIX = 'sha256:';
// The member with the start of its value: a longer pattern is found faster.
const HASH_MEMBER = ',"hash":"sha256:';
const HASH_VALUE_LENGTH = 64; // hex digits after the prefix
const ID_KEY = '"id":"';
const PREVIOUS_HASH_KEY = '"previous_hash":"sha256:';

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
  // First, as it reads the text front to back: the searches below then find it in the cache.
  const inScratch = copyIfAscii(text);
  const at = memberNearEnd(text);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: at -1 the digest would have to be among the characters it is computed over; at 0 the line opens with the member, not '{': no sealer wrote it, so its hash is forged with it like any forged line's
  if (at < 0) return undefined;
  const digestStart = at + HASH_MEMBER.length;
  const valueEnd = digestStart + HASH_VALUE_LENGTH;
  if (text.charCodeAt(valueEnd) !== QUOTE || text.charCodeAt(valueEnd + 1) !== COMMA) return undefined;
  // Flat: no object opens or closes between the member and the final brace.
  const close = text.indexOf('}', valueEnd);
  if (close !== text.length - 1 || text.indexOf('{', valueEnd) >= 0) return undefined;
  // Compared within its own slice: several times cheaper than startsWith at an offset.
  const stored = text.slice(digestStart - HASH_PREFIX.length, valueEnd);
  if (!stored.endsWith(sha256HexWithout(text, inScratch, at, valueEnd + 1))) return undefined;
  // The bytes are the sealed ones, so the flat run after the member is canonical JSON:
  // these keys occur once, outside strings (whose quotes are escaped). `id` sorts right
  // after `hash`; previous_hash is followed only by risk_score, seq and timestamp.
  const tail = text.slice(valueEnd); // searched as its own string, for the same reason
  const id = valueAfter(tail, ID_KEY, 0, '"');
  const previousAt = keyAt(tail, PREVIOUS_HASH_KEY, Math.max(0, tail.length - LINK_WINDOW), 0);
  const previousEnd = previousAt + PREVIOUS_HASH_KEY.length + HASH_VALUE_LENGTH;
  if (previousAt < 0 || tail.charCodeAt(previousEnd) !== QUOTE) return undefined;
  const seq = integerAfter(tail, '"seq":', previousEnd);
  if (!Number.isSafeInteger(seq) || seq < 1 || id === undefined) return undefined;
  return {
    seq,
    id,
    previous_hash: tail.slice(previousAt + PREVIOUS_HASH_KEY.length - HASH_PREFIX.length, previousEnd),
    hash: stored,
  };
}

const COMMA = 0x2c;
const QUOTE = 0x22;
const CLOSING_BRACE = 0x7d;
const LINK_WINDOW = 256;
// The members after `hash` take about 300 characters: a forward search from there is far
// cheaper than lastIndexOf over the whole entry. Should it find a nested lookalike first
// (a short tail), the digest fails and the caller takes the full path: slower, as sound.
const TAIL_WINDOW = 512;

function memberNearEnd(text: string): number {
  // Stryker disable next-line ArithmeticOperator: a search from past the end falls to lastIndexOf, which finds the same member in any text that can prove itself: nothing nested follows it
  const near = text.indexOf(HASH_MEMBER, Math.max(0, text.length - TAIL_WINDOW));
  // Stryker disable next-line ConditionalExpression,EqualityOperator: false and > 0: lastIndexOf finds the same member (see above), the search being at 0 only for a line that opens with it (a member beyond the window is tested)
  return near >= 0 ? near : text.lastIndexOf(HASH_MEMBER);
}

// Entries are ASCII but for non-English text: their UTF-8 bytes are then their characters,
// so the hashed bytes are the text's with the member cut out, in one reused buffer. That
// spares joining two strings and converting the result: a tenth of the verifier's time.
// Stryker disable next-line ArithmeticOperator: a smaller scratch only sends more texts to the string path, which hashes the same bytes
const SCRATCH_MAX_CHARS = 64 * 1024;
// A plain Uint8Array: its views cost less to make than a Buffer's.
// Stryker disable next-line ArithmeticOperator: as above
const scratch = new Uint8Array(SCRATCH_MAX_CHARS * 3);
const utf8 = new TextEncoder();

/** Whether the text is in the scratch as its UTF-8 bytes, one a character. */
function copyIfAscii(text: string): boolean {
  // The scratch holds 3 bytes a character, so the whole text fits, and as many bytes as
  // characters means that every character took one byte.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: false and < only send texts to the string path, which hashes the same bytes (the other mutants are tested)
  return text.length <= SCRATCH_MAX_CHARS && utf8.encodeInto(text, scratch).written === text.length;
}

/** SHA-256 (hex) of the text's UTF-8 bytes without the characters from `cutStart` to `cutEnd`. */
function sha256HexWithout(text: string, inScratch: boolean, cutStart: number, cutEnd: number): string {
  // Stryker disable next-line ConditionalExpression: the string path hashes the same bytes, only slower
  if (!inScratch) return hash('sha256', text.slice(0, cutStart) + text.slice(cutEnd), 'hex');
  scratch.copyWithin(cutStart, cutEnd, text.length);
  return hash('sha256', scratch.subarray(0, text.length - (cutEnd - cutStart)), 'hex');
}

/** Where `key` starts, searched from `near` first, then from `from`; -1 when absent. */
function keyAt(text: string, key: string, near: number, from: number): number {
  const found = text.indexOf(key, near);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator: the key occurs once in the flat tail, which opens with `",`: a second search from the start finds the same place (one cut short at the window is tested)
  return found >= 0 || near === from ? found : text.indexOf(key, from);
}

/** The raw text after `key` (searched from `from`) up to the next `terminator`. */
function valueAfter(text: string, key: string, from: number, terminator: string): string | undefined {
  const start = text.indexOf(key, from);
  // Stryker disable next-line EqualityOperator: the tail opens with `",`, so no key starts at 0
  if (start < 0) return undefined;
  const end = text.indexOf(terminator, start + key.length);
  // Stryker disable next-line EqualityOperator: the terminator is searched for after the key, so never found at 0
  return end < 0 ? undefined : text.slice(start + key.length, end);
}

/** The digits after `key` as a number; NaN unless a member boundary follows them. */
function integerAfter(text: string, key: string, from: number): number {
  const start = text.indexOf(key, from);
  // Stryker disable next-line EqualityOperator: searched from after previous_hash, so never found at 0
  if (start < 0) return Number.NaN;
  let i = start + key.length;
  let value = 0;
  for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i))
    value = value * 10 + c - 0x30;
  const next = text.charCodeAt(i);
  // Stryker disable next-line ArithmeticOperator: i never falls below start + key.length, so this only drops the digit check, and no digits leave 0, which seq < 1 refuses
  return i > start + key.length && (next === COMMA || next === CLOSING_BRACE) ? value : Number.NaN;
}
