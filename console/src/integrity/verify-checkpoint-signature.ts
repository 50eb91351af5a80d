import { parseSignedCheckpoint, type SignedCheckpoint } from './checkpoint-note.js';
import { fromBase64, ProofCheckError, sameBytes } from './tree-hash.js';

/** A C2SP note verifier key, `name+keyid+base64(type || public key)`; Ed25519 (0x01) or cosignature/v1 (0x04). */
export interface VerifierKey {
  name: string;
  keyId: string;
  type: 'log' | 'witness';
  publicKey: Uint8Array<ArrayBuffer>;
}

const KEY_TYPES: Record<number, VerifierKey['type']> = { 0x01: 'log', 0x04: 'witness' };

export async function parseVerifierKey(text: string): Promise<VerifierKey> {
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(text.trim());
  if (!match) throw new ProofCheckError('a verifier key reads name+keyid+base64');
  const [, name, keyId, encoded] = match as unknown as [string, string, string, string];
  const bytes = fromBase64(encoded);
  const type = KEY_TYPES[bytes[0] ?? -1];
  if (type === undefined || bytes.length !== 33)
    throw new ProofCheckError(`${name}: not an Ed25519 verifier key`);
  // The key ID is the first 4 bytes of SHA-256(name || "\n" || type || public key).
  const named = new Uint8Array([...new TextEncoder().encode(`${name}\n`), ...bytes]);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', named));
  if (!sameBytes(digest.slice(0, 4), fromHex(keyId)))
    throw new ProofCheckError(`${name}: the key ID does not match the key`);
  return { name, keyId, type, publicKey: bytes.slice(1) };
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** The message a signature covers and its signature bytes; undefined for a cosignature of the wrong length. */
function signedMessage(
  key: VerifierKey,
  text: string,
  payload: Uint8Array<ArrayBuffer>,
): { message: Uint8Array<ArrayBuffer>; signature: Uint8Array<ArrayBuffer> } | undefined {
  if (key.type === 'log') return { message: new TextEncoder().encode(text), signature: payload };
  if (payload.length !== 8 + 64) return undefined;
  const time = new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0);
  return {
    message: new TextEncoder().encode(`cosignature/v1\ntime ${time}\n${text}`),
    signature: payload.slice(8),
  };
}

/**
 * What one signature line of a checkpoint shows, against the keys the user trusts:
 * `signed`, a trusted log key's signature verified (the log signed this checkpoint);
 * `cosigned`, a trusted witness key's cosignature verified (the witness saw it, which says
 * nothing of who signed it); `unverified`, no trusted key has this name and key ID, so the
 * name is only what the note claims; `invalid`, a trusted key's signature fails: forged
 * or altered.
 */
export interface SignatureCheck {
  name: string;
  status: 'signed' | 'cosigned' | 'unverified' | 'invalid';
}

/** Each signature line of the checkpoint, checked with the trusted key of its name and ID (WebCrypto Ed25519). */
export async function checkSignatures(
  checkpoint: SignedCheckpoint,
  keys: readonly VerifierKey[],
): Promise<SignatureCheck[]> {
  return Promise.all(
    checkpoint.signatures.map(async (signature): Promise<SignatureCheck> => {
      const key = keys.find((k) => k.name === signature.name && k.keyId === signature.keyId);
      if (key === undefined) return { name: signature.name, status: 'unverified' };
      const verified = await verifies(key, checkpoint.text, signature.payload);
      const status = !verified ? 'invalid' : key.type === 'log' ? 'signed' : 'cosigned';
      return { name: signature.name, status };
    }),
  );
}

async function verifies(key: VerifierKey, text: string, payload: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const signed = signedMessage(key, text, payload);
  if (signed === undefined) return false;
  const publicKey = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, [
    'verify',
  ]);
  return crypto.subtle.verify({ name: 'Ed25519' }, publicKey, signed.signature, signed.message);
}

/** A note's signatures checked with the keys the user trusts, as saved (one text per key). */
export async function checkNoteSignatures(
  note: string,
  keyTexts: readonly string[],
): Promise<SignatureCheck[]> {
  const keys = await Promise.all(keyTexts.map(parseVerifierKey));
  return checkSignatures(parseSignedCheckpoint(note), keys);
}
