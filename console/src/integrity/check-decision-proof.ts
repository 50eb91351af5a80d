import { parseVerifierKey, verifyCheckpointSignatures } from './verify-checkpoint-signature.js';
import { trustedKeyTexts } from './trusted-keys.js';
import { verifyEntryInclusion, type HashedEntry, type InclusionProofView } from './verify-entry-inclusion.js';

export interface ProofOutcome {
  origin: string;
  treeSize: number;
  leafIndex: number;
  /** Trusted keys whose signatures on the checkpoint verified. */
  signedBy: string[];
  /** Every signer the note names, trusted or not. */
  signers: string[];
}

/**
 * The browser's whole check of a decision's entry: the entry is the one the trail names,
 * it is in the checkpoint's tree, and the trusted keys' signatures on that checkpoint hold.
 */
export async function checkDecisionProof(
  entry: HashedEntry,
  trailHash: string,
  proof: InclusionProofView,
): Promise<ProofOutcome> {
  if (entry.hash !== trailHash)
    throw new Error(`the audit entry's hash ${entry.hash} is not the trail's ${trailHash}`);
  const checkpoint = await verifyEntryInclusion(entry, proof);
  const keys = await Promise.all(trustedKeyTexts().map(parseVerifierKey));
  return {
    origin: checkpoint.origin,
    treeSize: checkpoint.size,
    leafIndex: proof.leaf_index,
    signedBy: await verifyCheckpointSignatures(checkpoint, keys),
    signers: checkpoint.signatures.map((s) => s.name),
  };
}
