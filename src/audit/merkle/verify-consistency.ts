import { nodeHash, type TreeHash } from './tree-hash.js';
import { halve, isOdd, isPowerOfTwo } from './tree-shape.js';
import { checkHashes, ProofError, shiftPastEvenBits } from './verify-inclusion.js';

/**
 * Checks that the tree of `toSize` leaves with root `toRoot` extends the tree of
 * `fromSize` leaves with root `fromRoot` (RFC 9162 section 2.1.4.2). Sizes and roots
 * must come from signed checkpoints: a proof can verify for more than one second size
 * with the same root, so never take them from whoever presents the proof.
 */
export function verifyConsistency(
  fromSize: number,
  toSize: number,
  proof: readonly TreeHash[],
  fromRoot: TreeHash,
  toRoot: TreeHash,
): void {
  checkSizes(fromSize, toSize);
  checkHashes(fromRoot, toRoot, ...proof);
  if (fromSize === toSize || fromSize === 0) {
    // Equal trees need no proof; every tree extends the empty one.
    if (proof.length > 0)
      throw new ProofError('a proof between equal sizes or from the empty tree must be empty');
    if (fromSize === toSize && !fromRoot.equals(toRoot))
      throw new ProofError('equal sizes with different roots');
    return;
  }
  if (proof.length === 0) throw new ProofError('the proof is empty');
  const [fr, sr] = rootsFromConsistencyPath(
    fromSize,
    toSize,
    isPowerOfTwo(fromSize) ? [fromRoot, ...proof] : proof,
  );
  if (!fr.equals(fromRoot)) throw new ProofError('the proof does not lead to the older root');
  if (!sr.equals(toRoot)) throw new ProofError('the proof does not lead to the newer root');
}

function checkSizes(fromSize: number, toSize: number): void {
  if (!Number.isSafeInteger(fromSize) || !Number.isSafeInteger(toSize) || fromSize < 0) {
    throw new ProofError(`sizes ${fromSize} and ${toSize} are not valid tree sizes`);
  }
  if (toSize < fromSize) throw new ProofError(`size ${toSize} is smaller than size ${fromSize}`);
}

function rootsFromConsistencyPath(
  fromSize: number,
  toSize: number,
  path: readonly TreeHash[],
): [TreeHash, TreeHash] {
  let fn = fromSize - 1;
  let sn = toSize - 1;
  while (isOdd(fn)) [fn, sn] = [halve(fn), halve(sn)];
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) throw new ProofError('the proof is longer than the trees are deep');
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      [fn, sn] = shiftPastEvenBits(fn, sn);
    } else {
      sr = nodeHash(sr, c);
    }
    [fn, sn] = [halve(fn), halve(sn)];
  }
  if (sn !== 0) throw new ProofError('the proof is shorter than the trees are deep');
  return [fr, sr];
}
