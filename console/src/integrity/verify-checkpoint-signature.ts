import type { SignedCheckpoint } from './checkpoint-note.js';
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

/** The message a signature covers: the text, or for a cosignature its timestamped wrapper. */
function signedMessage(
  key: VerifierKey,
  text: string,
  payload: Uint8Array<ArrayBuffer>,
): { message: Uint8Array<ArrayBuffer>; signature: Uint8Array<ArrayBuffer> } {
  if (key.type === 'log') return { message: new TextEncoder().encode(text), signature: payload };
  if (payload.length !== 8 + 64)
    throw new ProofCheckError(`the cosignature of ${key.name} has the wrong length`);
  const time = new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0);
  return {
    message: new TextEncoder().encode(`cosignature/v1\ntime ${time}\n${text}`),
    signature: payload.slice(8),
  };
}

/**
 * The names of the trusted keys whose signatures on the checkpoint verify (WebCrypto
 * Ed25519). A signature by a trusted key that fails is an error: the note was forged or
 * altered. Keys that did not sign are simply absent from the answer.
 */
export async function verifyCheckpointSignatures(
  checkpoint: SignedCheckpoint,
  keys: readonly VerifierKey[],
): Promise<string[]> {
  const verified: string[] = [];
  for (const signature of checkpoint.signatures) {
    const key = keys.find((k) => k.name === signature.name && k.keyId === signature.keyId);
    if (key === undefined) continue;
    const { message, signature: bytes } = signedMessage(key, checkpoint.text, signature.payload);
    const publicKey = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, [
      'verify',
    ]);
    if (!(await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, bytes, message))) {
      throw new ProofCheckError(`the signature of ${key.name} on the checkpoint does not verify`);
    }
    verified.push(key.name);
  }
  return verified;
}
