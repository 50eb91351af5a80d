/** RFC 6962 hashing with WebCrypto's SHA-256: leaves prefixed 0x00, interior nodes 0x01. */

export const HASH_BYTES = 32;

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

function prefixed(prefix: number, ...parts: Uint8Array<ArrayBuffer>[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(1 + parts.reduce((n, p) => n + p.length, 0));
  out[0] = prefix;
  let offset = 1;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function leafHash(input: string): Promise<Uint8Array<ArrayBuffer>> {
  return sha256(prefixed(0x00, new TextEncoder().encode(input)));
}

export function nodeHash(
  left: Uint8Array<ArrayBuffer>,
  right: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  return sha256(prefixed(0x01, left, right));
}

/** The audit chain's own entry hash: `sha256:` + hex of SHA-256 over the canonical text. */
export async function entryHash(canonicalText: string): Promise<string> {
  return `sha256:${toHex(await sha256(new TextEncoder().encode(canonicalText)))}`;
}

export function toHex(bytes: Uint8Array<ArrayBuffer>): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Strict base64 (canonical padding), as proofs and checkpoints carry hashes. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new ProofCheckError(`"${text.slice(0, 16)}…" is not base64`);
  }
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  if (btoa(String.fromCharCode(...bytes)) !== text) throw new ProofCheckError('base64 is not canonical');
  return bytes;
}

export function sameBytes(a: Uint8Array<ArrayBuffer>, b: Uint8Array<ArrayBuffer>): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Why a proof does not hold. */
export class ProofCheckError extends Error {}
