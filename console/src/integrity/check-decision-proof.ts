import { checkSignatures, parseVerifierKey, type SignatureCheck } from './verify-checkpoint-signature.js';
import { trustedKeyTexts } from './trusted-keys.js';
import { ProofCheckError } from './tree-hash.js';
import { verifyEntryInclusion, type HashedEntry, type InclusionProofView } from './verify-entry-inclusion.js';

export interface ProofOutcome {
  origin: string;
  treeSize: number;
  leafIndex: number;
  /** Every signature line of the checkpoint, and what it shows with the trusted keys. */
  signatures: SignatureCheck[];
  /** How many keys the user trusts: with none, no name on the checkpoint is verified. */
  keysTrusted: number;
}

/**
 * The browser's whole check of a decision's entry: the entry is the one the trail names,
 * it is in the checkpoint's tree, and no trusted key's signature on that checkpoint fails.
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
  const signatures = await checkSignatures(checkpoint, keys);
  const invalid = signatures.find((s) => s.status === 'invalid');
  if (invalid)
    throw new ProofCheckError(`the signature of ${invalid.name} on the checkpoint does not verify`);
  return {
    origin: checkpoint.origin,
    treeSize: checkpoint.size,
    leafIndex: proof.leaf_index,
    signatures,
    keysTrusted: keys.length,
  };
}
