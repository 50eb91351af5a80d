import { useEffect, useState } from 'preact/hooks';
import { checkDecisionProof, type ProofOutcome } from '../integrity/check-decision-proof.js';
import type { HashedEntry, InclusionProofView } from '../integrity/verify-entry-inclusion.js';

/** The inclusion proof of a decision's entry, checked in this browser with WebCrypto. */
export function ProofStatus({
  entry,
  trailHash,
  proof,
}: {
  entry: HashedEntry;
  trailHash: string;
  proof: InclusionProofView;
}) {
  const [result, setResult] = useState<ProofOutcome | Error | null>(null);
  useEffect(() => {
    checkDecisionProof(entry, trailHash, proof).then(setResult, (err: Error) => setResult(err));
  }, [entry, trailHash, proof]);
  if (result === null) return <p role="status">Checking the inclusion proof…</p>;
  if (result instanceof Error) {
    return (
      <p class="notice error" role="alert" data-testid="proof-result">
        Inclusion proof does not hold: {result.message}
      </p>
    );
  }
  return (
    <div class="notice ok" data-testid="proof-result">
      <p>
        Inclusion proof verified in this browser: entry {result.leafIndex + 1} is leaf {result.leafIndex} of
        the tree of {result.treeSize} entries whose root the checkpoint of <code>{result.origin}</code>{' '}
        states.
      </p>
      <p>
        {result.signedBy.length > 0
          ? `Checkpoint signatures verified for: ${result.signedBy.join(', ')}.`
          : `Checkpoint signatures (${result.signers.join(', ')}) not checked: add the verifier keys you trust on the Integrity page.`}
      </p>
    </div>
  );
}
