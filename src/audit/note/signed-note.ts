import { NoteError } from './note-error.js';
import {
  hasControlCharacter,
  isValidKeyName,
  type NoteSigningKey,
  type NoteVerifierKey,
  sameKey,
  SIGNATURE_TYPE,
  signWith,
  verifyWith,
} from './note-keys.js';

// C2SP signed-note: the text, a blank line, then lines "— <name> <base64(key ID || signature)>".
const SIGNATURE_PREFIX = '\u2014 ';
const MAX_NOTE_BYTES = 1 << 20;
const MAX_SIGNATURES = 100;

/** A signature line of a note, before or after checking. */
export interface NoteSignature {
  readonly name: string;
  readonly keyId: number;
  /** For cosignatures: the POSIX time the cosigner signed at. */
  readonly timestamp?: number;
  readonly line: string;
}

export interface OpenedNote {
  readonly text: string;
  /** Signatures by a known key, each checked. */
  readonly verified: NoteSignature[];
  /** Signatures by keys the caller did not name: kept, never trusted. */
  readonly unknown: NoteSignature[];
}

/** The message a signature covers: the text, or for a cosignature its timestamped wrapper. */
export function signedMessage(type: number, text: string, timestamp?: number): Buffer {
  return type === SIGNATURE_TYPE.cosignatureV1
    ? Buffer.from(`cosignature/v1\ntime ${timestamp}\n${text}`, 'utf8')
    : Buffer.from(text, 'utf8');
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('note_malformed', 'note text must end with a newline');
  if (hasControlCharacter(text)) throw new NoteError('note_malformed', 'note text holds a control character');
  if (text.includes('\uFFFD') || !isWellFormedUnicode(text))
    throw new NoteError('note_malformed', 'note is not valid UTF-8');
}

function isWellFormedUnicode(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** One signature line for `text` by `key` (a cosignature when the key's type says so). */
export function signatureLine(text: string, key: NoteSigningKey, timestamp?: number): string {
  checkText(text);
  const id = Buffer.alloc(4);
  id.writeUInt32BE(key.keyId);
  let payload: Buffer;
  if (key.type === SIGNATURE_TYPE.cosignatureV1) {
    if (timestamp === undefined || !Number.isSafeInteger(timestamp) || timestamp < 0) {
      throw new NoteError('cosignature_invalid', 'a cosignature needs a POSIX timestamp');
    }
    const time = Buffer.alloc(8);
    time.writeBigUInt64BE(BigInt(timestamp));
    payload = Buffer.concat([id, time, signWith(key, signedMessage(key.type, text, timestamp))]);
  } else {
    payload = Buffer.concat([id, signWith(key, signedMessage(key.type, text))]);
  }
  return `${SIGNATURE_PREFIX}${key.name} ${payload.toString('base64')}\n`;
}

/** The signed note: text, blank line, one signature line per key. */
export function signNote(text: string, keys: readonly NoteSigningKey[]): string {
  if (keys.length === 0) throw new NoteError('note_malformed', 'a note needs at least one signature');
  return `${text}\n${keys.map((key) => signatureLine(text, key)).join('')}`;
}

function parseSignatureLine(line: string): NoteSignature & { payload: Buffer } {
  if (!line.startsWith(SIGNATURE_PREFIX))
    throw new NoteError('note_malformed', 'a signature line must start with "— "');
  const rest = line.slice(SIGNATURE_PREFIX.length);
  const space = rest.lastIndexOf(' ');
  const name = rest.slice(0, Math.max(space, 0));
  const encoded = rest.slice(space + 1);
  // No space, or a space first, leaves the name empty, which is not a valid key name.
  if (!isValidKeyName(name)) throw new NoteError('note_malformed', `signature line has an invalid key name`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new NoteError('note_malformed', `signature of ${name} is not base64`);
  }
  const payload = Buffer.from(encoded, 'base64');
  if (payload.length < 5) throw new NoteError('note_malformed', `signature of ${name} is too short`);
  return { name, keyId: payload.readUInt32BE(0), payload: payload.subarray(4), line: `${line}\n` };
}

/** Splits a note into its text and its signature lines, checking only the syntax. */
export function splitNote(note: string): {
  text: string;
  signatures: (NoteSignature & { payload: Buffer })[];
} {
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES)
    throw new NoteError('note_malformed', 'note is larger than 1 MiB');
  if (hasControlCharacter(note)) throw new NoteError('note_malformed', 'note holds a control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('note_malformed', 'note has no blank line before its signatures');
  const text = note.slice(0, split + 1);
  checkText(text);
  const block = note.slice(split + 2);
  if (!block.endsWith('\n')) throw new NoteError('note_malformed', 'note must end with a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES)
    throw new NoteError('note_malformed', `note has more than ${MAX_SIGNATURES} signatures`);
  return { text, signatures: lines.map(parseSignatureLine) };
}

/**
 * Opens a note with the keys the caller trusts (signed-note, "Signatures"): signatures
 * by other keys are ignored, even when they share a name or a key ID with a known key;
 * a failing signature by a known key rejects the whole note; so does a note no known
 * key verifies.
 */
export function openNote(note: string, keys: readonly NoteVerifierKey[]): OpenedNote {
  const { text, signatures } = splitNote(note);
  const verified: NoteSignature[] = [];
  const unknown: NoteSignature[] = [];
  for (const { payload, ...signature } of signatures) {
    const key = keys.find((k) => sameKey(k, signature));
    if (key === undefined) {
      unknown.push(signature);
      continue;
    }
    const checked = checkSignature(key, text, payload);
    if (!verified.some((v) => sameKey(v, key))) {
      verified.push({
        ...signature,
        ...(checked.timestamp === undefined ? {} : { timestamp: checked.timestamp }),
      });
    }
  }
  if (verified.length === 0)
    throw new NoteError('note_unverified', 'no signature on the note is by a trusted key');
  return { text, verified, unknown };
}

function checkSignature(key: NoteVerifierKey, text: string, payload: Buffer): { timestamp?: number } {
  if (key.type === SIGNATURE_TYPE.cosignatureV1) {
    if (payload.length !== 8 + 64)
      throw new NoteError('note_unverified', `cosignature of ${key.name} has the wrong length`);
    const time = payload.readBigUInt64BE(0);
    if (time > BigInt(Number.MAX_SAFE_INTEGER))
      throw new NoteError('note_unverified', `cosignature of ${key.name} has an impossible time`);
    const timestamp = Number(time);
    if (!verifyWith(key, signedMessage(key.type, text, timestamp), payload.subarray(8))) {
      throw new NoteError('note_unverified', `cosignature of ${key.name} does not verify`);
    }
    return { timestamp };
  }
  if (!verifyWith(key, signedMessage(key.type, text), payload)) {
    throw new NoteError('note_unverified', `signature of ${key.name} does not verify`);
  }
  return {};
}
