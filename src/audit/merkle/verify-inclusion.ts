import { isTreeHash, nodeHash, type TreeHash } from './tree-hash.js';
import { halve, isOdd } from './tree-shape.js';

/** A proof that does not hold, with the reason. */
export class ProofError extends Error {
  readonly code = 'proof_invalid';
}

export function checkHashes(...hashes: readonly TreeHash[]): void {
  if (!hashes.every(isTreeHash)) throw new ProofError('a hash is not 32 bytes');
}

/** Right-shifts fn and sn together until fn's lowest bit is set or fn is 0 (RFC 9162's inner loop). */
export function shiftPastEvenBits(fn: number, sn: number): [number, number] {
  while (!isOdd(fn) && fn !== 0) [fn, sn] = [halve(fn), halve(sn)];
  return [fn, sn];
}

/**
 * The root an inclusion proof leads to (RFC 9162 section 2.1.3.2), or a reason it
 * cannot lead anywhere. Index and size are safe integers, so indices above 2^32 work.
 */
export function rootFromInclusionProof(
  leafIndex: number,
  treeSize: number,
  leaf: TreeHash,
  proof: readonly TreeHash[],
): TreeHash {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0) {
    throw new ProofError(`leaf index ${leafIndex} or tree size ${treeSize} is not a valid size`);
  }
  if (leafIndex >= treeSize) throw new ProofError(`leaf index ${leafIndex} is beyond tree size ${treeSize}`);
  checkHashes(leaf, ...proof);
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) throw new ProofError('the proof is longer than the tree is deep');
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      [fn, sn] = shiftPastEvenBits(fn, sn);
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [halve(fn), halve(sn)];
  }
  if (sn !== 0) throw new ProofError('the proof is shorter than the tree is deep');
  return r;
}

/** Whether the leaf is at `leafIndex` in the tree of `treeSize` leaves with this root. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leaf: TreeHash,
  proof: readonly TreeHash[],
  root: TreeHash,
): void {
  checkHashes(root);
  const computed = rootFromInclusionProof(leafIndex, treeSize, leaf, proof);
  if (!computed.equals(root)) throw new ProofError('the proof leads to a different root');
}
