import { useEffect, useState } from 'preact/hooks';
import { checkDecisionProof, type ProofOutcome } from '../integrity/check-decision-proof.js';
import type { SignatureCheck } from '../integrity/verify-checkpoint-signature.js';
import type { HashedEntry, InclusionProofView } from '../integrity/verify-entry-inclusion.js';

const namesOf = (signatures: SignatureCheck[], status: SignatureCheck['status']) =>
  signatures.filter((s) => s.status === status).map((s) => s.name);

/**
 * What the checkpoint's signatures show: "verified" only for names whose key the user
 * trusts and whose signature checked, and the log's signature apart from witnesses'
 * cosignatures, which say that a witness saw the checkpoint, not that the log signed it.
 */
function signatureSummary({ signatures, keysTrusted }: ProofOutcome): string {
  if (keysTrusted === 0) {
    return `Checkpoint signatures (${signatures.map((s) => s.name).join(', ')}) not verified: no key trusted. Add the verifier keys you trust on the Integrity page.`;
  }
  const signed = namesOf(signatures, 'signed');
  const cosigned = namesOf(signatures, 'cosigned');
  const unverified = namesOf(signatures, 'unverified');
  return [
    signed.length > 0
      ? `The log's signature verified: ${signed.join(', ')}.`
      : "The log's signature is not verified: no log key (type 0x01) you trust signed this checkpoint.",
    cosigned.length > 0 ? `Witness cosignatures verified: ${cosigned.join(', ')}.` : '',
    unverified.length > 0 ? `Not verified (no trusted key of theirs): ${unverified.join(', ')}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

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
      <p>{signatureSummary(result)}</p>
    </div>
  );
}
