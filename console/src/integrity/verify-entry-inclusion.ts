import { canonicalJson } from './canonical-json.js';
import { parseSignedCheckpoint, type SignedCheckpoint } from './checkpoint-note.js';
import { rootFromInclusionProof } from './inclusion-proof.js';
import { entryHash, fromBase64, leafHash, ProofCheckError, sameBytes } from './tree-hash.js';

/** An inclusion proof as the API serves it (a trail's integrity.inclusion_proof, /audit/proof). */
export interface InclusionProofView {
  seq: number;
  leaf_index: number;
  tree_size: number;
  hashes: string[];
  checkpoint: string;
}

/** An audit entry as /audit/log returns it: every field the hash covers, and the hash. */
export interface HashedEntry {
  seq: number;
  hash: string;
}

/**
 * Checks, in the browser, that an audit entry is in the tree whose root the checkpoint
 * states: the entry recomputes to its own hash (so it is the entry that was recorded), its
 * leaf (SHA-256 of 0x00 and its RFC 8785 JSON without `hash`) sits at index seq - 1, and
 * the proof's path leads from that leaf to the checkpoint's root at the checkpoint's size.
 * Throws ProofCheckError with the reason when anything does not hold. The checkpoint's
 * signature is a separate question (verify-checkpoint-signature.ts).
 */
export async function verifyEntryInclusion(
  entry: HashedEntry,
  proof: InclusionProofView,
): Promise<SignedCheckpoint> {
  const checkpoint = parseSignedCheckpoint(proof.checkpoint);
  if (proof.tree_size !== checkpoint.size) {
    throw new ProofCheckError(
      `the proof is for tree size ${proof.tree_size} but the checkpoint is of size ${checkpoint.size}`,
    );
  }
  const leafIndex = entry.seq - 1;
  if (proof.leaf_index !== leafIndex) {
    throw new ProofCheckError(`the entry has seq ${entry.seq} but the proof is for leaf ${proof.leaf_index}`);
  }
  const { hash, ...hashed } = entry;
  const canonical = canonicalJson(hashed);
  if ((await entryHash(canonical)) !== hash) {
    throw new ProofCheckError(`entry ${entry.seq} does not hash to its recorded hash: it was altered`);
  }
  const root = await rootFromInclusionProof(
    leafIndex,
    checkpoint.size,
    await leafHash(canonical),
    proof.hashes.map(fromBase64),
  );
  if (!sameBytes(root, checkpoint.root))
    throw new ProofCheckError("the proof leads to a root other than the checkpoint's");
  return checkpoint;
}
