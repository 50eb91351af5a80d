import { createHash, hash } from 'node:crypto';

/** A SHA-256 tree hash: 32 bytes. */
export type TreeHash = Buffer;

export const HASH_BYTES = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

// One-shot hash() costs about half of createHash().update()...digest() on these short
// inputs, and every append hashes one leaf and about one node per entry.

/** RFC 6962 MTH({}): the root of the empty tree, SHA-256 of nothing. */
export const EMPTY_ROOT: TreeHash = createHash('sha256').digest();

/** RFC 6962 leaf hash: SHA-256(0x00 || input). */
export function leafHash(input: Uint8Array | string): TreeHash {
  // U+0000 is the single byte 0x00 in UTF-8.
  const bytes = typeof input === 'string' ? `\u0000${input}` : Buffer.concat([LEAF_PREFIX, input]);
  return hash('sha256', bytes, 'buffer');
}

/** RFC 6962 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): TreeHash {
  return hash('sha256', Buffer.concat([NODE_PREFIX, left, right]), 'buffer');
}

/** True when `value` is a 32-byte hash, as every proof element and root must be. */
export function isTreeHash(value: Uint8Array): boolean {
  return value.length === HASH_BYTES;
}
