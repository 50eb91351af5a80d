import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  ed25519PrivateKey,
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  rawPublicKey,
} from './ed25519-key.js';
import { NoteError } from './note-error.js';

/** Signature type bytes of C2SP signed-note: plain Ed25519, and timestamped cosignatures. */
export const SIGNATURE_TYPE = { ed25519: 0x01, cosignatureV1: 0x04 } as const;
export type SignatureType = (typeof SIGNATURE_TYPE)[keyof typeof SIGNATURE_TYPE];

/** A key that signs notes: its name, its key ID, and the private key. */
export interface NoteSigningKey {
  readonly name: string;
  readonly type: SignatureType;
  readonly keyId: number;
  readonly privateKey: KeyObject;
  readonly publicKey: Buffer;
}

/** A key that checks signatures of one name and key ID. */
export interface NoteVerifierKey {
  readonly name: string;
  readonly type: SignatureType;
  readonly keyId: number;
  readonly publicKey: KeyObject;
  readonly rawPublicKey: Buffer;
}

/** Whether two keys or signatures are of one key: the same name and the same key ID. */
export function sameKey(a: { name: string; keyId: number }, b: { name: string; keyId: number }): boolean {
  return a.name === b.name && a.keyId === b.keyId;
}

/** Key names: non-empty, no Unicode space, no plus (signed-note, "Format"). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name) && !/\p{Zs}/u.test(name) && !hasControlCharacter(name);
}

export function hasControlCharacter(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  return /[\u0000-\u0009\u000b-\u001f]/.test(text);
}

/** SHA-256(name || 0x0A || type || public key)[:4] as a big-endian uint32. */
export function keyIdOf(name: string, type: SignatureType, publicKey: Uint8Array): number {
  const digest = createHash('sha256')
    .update(name)
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest();
  return digest.readUInt32BE(0);
}

const hex8 = (keyId: number) => keyId.toString(16).padStart(8, '0');

/** `name+keyid+base64(type || public key)`, the verifier key ("vkey") a signer shares. */
export function formatVerifierKey(key: NoteSigningKey | NoteVerifierKey): string {
  const raw = 'rawPublicKey' in key ? key.rawPublicKey : key.publicKey;
  return `${key.name}+${hex8(key.keyId)}+${Buffer.concat([Buffer.from([key.type]), raw]).toString('base64')}`;
}

/** `PRIVATE+KEY+name+keyid+base64(type || seed)`, the private key file format of Go's sumdb/note. */
export function formatSigningKey(key: NoteSigningKey): string {
  const jwk = key.privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d!, 'base64url');
  return `PRIVATE+KEY+${key.name}+${hex8(key.keyId)}+${Buffer.concat([Buffer.from([key.type]), seed]).toString('base64')}`;
}

function splitKey(text: string, parts: number, what: string, shape: string): string[] {
  const fields = text.trim().split('+');
  // Base64 may itself hold '+': everything after the key ID is the key material.
  if (fields.length < parts) throw new NoteError('key_malformed', `${what} is not ${shape}`);
  return [...fields.slice(0, parts - 1), fields.slice(parts - 1).join('+')];
}

function decodeKeyMaterial(name: string, idHex: string, material: string, what: string) {
  if (!isValidKeyName(name))
    throw new NoteError('key_malformed', `${what} has an invalid key name "${name}"`);
  if (!/^[0-9a-f]{8}$/.test(idHex))
    throw new NoteError('key_malformed', `${what} has an invalid key ID "${idHex}"`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material)) throw new NoteError('key_malformed', `${what} is not base64`);
  const bytes = Buffer.from(material, 'base64');
  const type = bytes[0];
  if (type !== SIGNATURE_TYPE.ed25519 && type !== SIGNATURE_TYPE.cosignatureV1) {
    throw new NoteError('key_malformed', `${what} has unsupported signature type ${type}`);
  }
  if (bytes.length !== 33) throw new NoteError('key_malformed', `${what} is not 32 bytes`);
  return { type, keyBytes: bytes.subarray(1), keyId: Number.parseInt(idHex, 16) };
}

export function parseVerifierKey(vkey: string): NoteVerifierKey {
  const [name, idHex, material] = splitKey(vkey, 3, 'verifier key', 'name+keyid+key');
  const { type, keyBytes, keyId } = decodeKeyMaterial(name!, idHex!, material!, 'verifier key');
  if (keyIdOf(name!, type, keyBytes) !== keyId) {
    throw new NoteError('key_malformed', `verifier key ID ${idHex} does not match its name and key`);
  }
  return {
    name: name!,
    type,
    keyId,
    publicKey: ed25519PublicKey(keyBytes),
    rawPublicKey: Buffer.from(keyBytes),
  };
}

export function parseSigningKey(skey: string): NoteSigningKey {
  // Checked first: a verifier key's base64 may hold '+', so it can have as many fields.
  if (!skey.trim().startsWith('PRIVATE+KEY+'))
    throw new NoteError('key_malformed', 'private key does not start with PRIVATE+KEY+');
  const [, , name, idHex, material] = splitKey(skey, 5, 'private key', 'PRIVATE+KEY+name+keyid+key');
  const { type, keyBytes, keyId } = decodeKeyMaterial(name!, idHex!, material!, 'private key');
  const privateKey = ed25519PrivateKey(keyBytes);
  const publicKey = rawPublicKey(privateKey);
  if (keyIdOf(name!, type, publicKey) !== keyId) {
    throw new NoteError('key_malformed', `private key ID ${idHex} does not match its name and key`);
  }
  return { name: name!, type, keyId, privateKey, publicKey };
}

export function generateSigningKey(
  name: string,
  type: SignatureType = SIGNATURE_TYPE.ed25519,
): NoteSigningKey {
  if (!isValidKeyName(name))
    throw new NoteError('key_malformed', `"${name}" is not a valid key name (no spaces or "+")`);
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = rawPublicKey(privateKey);
  return { name, type, keyId: keyIdOf(name, type, publicKey), privateKey, publicKey };
}

export function verifierOf(key: NoteSigningKey): NoteVerifierKey {
  return {
    name: key.name,
    type: key.type,
    keyId: key.keyId,
    publicKey: ed25519PublicKey(key.publicKey),
    rawPublicKey: key.publicKey,
  };
}

export const signWith = (key: NoteSigningKey, message: Uint8Array) => ed25519Sign(key.privateKey, message);
export const verifyWith = (key: NoteVerifierKey, message: Uint8Array, signature: Uint8Array) =>
  ed25519Verify(key.publicKey, message, signature);
