import { HASH_BYTES, nodeHash, ProofCheckError } from './tree-hash.js';

/**
 * The root an RFC 9162 inclusion proof (section 2.1.3.2) leads to from a leaf hash. Sizes
 * may exceed 2^32, so no bit operators (32-bit in JavaScript): safe-integer arithmetic only.
 */
export async function rootFromInclusionProof(
  leafIndex: number,
  treeSize: number,
  leaf: Uint8Array<ArrayBuffer>,
  proof: readonly Uint8Array<ArrayBuffer>[],
): Promise<Uint8Array<ArrayBuffer>> {
  checkArguments(leafIndex, treeSize, [leaf, ...proof]);
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) throw new ProofCheckError('the proof is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
    } else {
      r = await nodeHash(r, p);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  if (sn !== 0) throw new ProofCheckError('the proof is shorter than the tree is deep');
  return r;
}

function checkArguments(
  leafIndex: number,
  treeSize: number,
  hashes: readonly Uint8Array<ArrayBuffer>[],
): void {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0) {
    throw new ProofCheckError(`leaf index ${leafIndex} or tree size ${treeSize} is not a valid number`);
  }
  if (leafIndex >= treeSize)
    throw new ProofCheckError(`leaf index ${leafIndex} is beyond tree size ${treeSize}`);
  if (!hashes.every((h) => h.length === HASH_BYTES)) throw new ProofCheckError('a hash is not 32 bytes');
}
