import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

/**
 * RFC 6962 section 2.1 written out as the RFC states it, recursively over the whole
 * list of leaves, with no stored nodes, no frontier and no index arithmetic: the
 * reference the tree code is compared with.
 */
function sha256(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

function k(n: number): number {
  let power = 1;
  while (power * 2 < n) power *= 2;
  return power;
}

export function naiveRoot(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(Buffer.from([0]), leaves[0]!);
  const split = k(leaves.length);
  return sha256(Buffer.from([1]), naiveRoot(leaves.slice(0, split)), naiveRoot(leaves.slice(split)));
}

export function naivePath(m: number, leaves: readonly Uint8Array[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const split = k(leaves.length);
  return m < split
    ? [...naivePath(m, leaves.slice(0, split)), naiveRoot(leaves.slice(split))]
    : [...naivePath(m - split, leaves.slice(split)), naiveRoot(leaves.slice(0, split))];
}

function subproof(m: number, leaves: readonly Uint8Array[], complete: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [naiveRoot(leaves)];
  const split = k(n);
  return m <= split
    ? [...subproof(m, leaves.slice(0, split), complete), naiveRoot(leaves.slice(split))]
    : [...subproof(m - split, leaves.slice(split), false), naiveRoot(leaves.slice(0, split))];
}

export function naiveConsistency(m: number, leaves: readonly Uint8Array[]): Buffer[] {
  return m === 0 || m === leaves.length ? [] : subproof(m, leaves, true);
}

/** Leaf inputs 0..n-1, each distinct. */
export function numberedLeaves(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => Buffer.from(`leaf ${i}`));
}

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** An audit entry's leaf input (RFC 8785 JSON without `hash`) as the independent canonicalize package writes it. */
export function referenceLeafInput(entry: object): Buffer {
  const { hash: _hash, ...content } = entry as { hash?: unknown };
  return Buffer.from(canonicalize(content) ?? '', 'utf8');
}
