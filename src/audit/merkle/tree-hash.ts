import { createHash } from 'node:crypto';

/** A SHA-256 tree hash: 32 bytes. */
export type TreeHash = Buffer;

export const HASH_BYTES = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** RFC 6962 MTH({}): the root of the empty tree, SHA-256 of nothing. */
export const EMPTY_ROOT: TreeHash = createHash('sha256').digest();

/** RFC 6962 leaf hash: SHA-256(0x00 || input). */
export function leafHash(input: Uint8Array | string): TreeHash {
  return createHash('sha256').update(LEAF_PREFIX).update(input).digest();
}

/** RFC 6962 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): TreeHash {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** True when `value` is a 32-byte hash, as every proof element and root must be. */
export function isTreeHash(value: Uint8Array): boolean {
  return value.length === HASH_BYTES;
}
