import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

// DER prefixes that wrap a raw 32-byte Ed25519 seed (PKCS#8) or public key (SPKI), so
// node:crypto can use the raw bytes the note formats carry.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function ed25519PrivateKey(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** The raw 32-byte public key of a private key. */
export function rawPublicKey(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
}

export function ed25519Sign(privateKey: KeyObject, message: Uint8Array): Buffer {
  return sign(null, message, privateKey);
}

export function ed25519Verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  // Stryker disable next-line ConditionalExpression: OpenSSL's Ed25519 verify also returns false for any length but 64
  return signature.length === 64 && verify(null, message, publicKey, signature);
}
