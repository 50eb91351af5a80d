import type { AuditLog, Checkpoint } from '../audit/audit-log.js';
import { cosignedNote } from '../audit/checkpoint-shape.js';
import type { TreeHash } from '../audit/merkle/tree-hash.js';
import { parseCheckpoint } from '../audit/note/checkpoint-note.js';
import { splitNote } from '../audit/note/signed-note.js';
import { ArbiterError, AuditUnavailableError } from '../model/index.js';

/** A signed checkpoint with the tree size its note names. */
export interface SignedCheckpoint {
  size: number;
  note: string;
}

/** An entry's inclusion proof against one signed checkpoint. */
export interface InclusionProof {
  seq: number;
  treeSize: number;
  hashes: TreeHash[];
  checkpoint: string;
}

/**
 * Signed checkpoints, oldest first, sized by their own note (the text that was signed);
 * each note carries the witnesses' cosignatures after the log's signature.
 */
export async function signedCheckpoints(audit: AuditLog): Promise<SignedCheckpoint[]> {
  const checkpoints: Checkpoint[] = await audit.checkpoints();
  return checkpoints
    .filter((c): c is Checkpoint & { note: string } => c.note !== undefined)
    .map((c) => ({ size: parseCheckpoint(splitNote(c.note).text).size, note: cosignedNote(c) }));
}

export function latestSigned(signed: SignedCheckpoint[]): SignedCheckpoint {
  const latest = signed.at(-1);
  if (latest === undefined) {
    throw new ArbiterError(
      'NOT_FOUND',
      'the audit log has no signed checkpoint yet (serve with --audit-signing-key, then wait for the next checkpoint)',
    );
  }
  return latest;
}

/** Tree reads fail closed as 503 when the backend cannot answer, never as a 500. */
export async function fromTree<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ArbiterError) throw err;
    throw new AuditUnavailableError('the audit tree could not be read', { cause: err });
  }
}

export async function inclusionProof(
  audit: AuditLog,
  seq: number,
  checkpoint: SignedCheckpoint,
): Promise<InclusionProof> {
  const hashes = await fromTree(() => audit.tree().inclusionProof(seq - 1, checkpoint.size));
  return { seq, treeSize: checkpoint.size, hashes, checkpoint: checkpoint.note };
}

/** The JSON form of a proof, as /audit/proof answers and a trail's integrity carries it. */
export function inclusionProofView(proof: InclusionProof) {
  return {
    seq: proof.seq,
    leaf_index: proof.seq - 1,
    tree_size: proof.treeSize,
    hashes: proof.hashes.map((h) => h.toString('base64')),
    checkpoint: proof.checkpoint,
  };
}

/** The entry's proof against the latest signed checkpoint, or null while none covers it yet. */
export async function latestInclusionProof(audit: AuditLog, seq: number) {
  const latest = (await signedCheckpoints(audit)).at(-1);
  if (latest === undefined || latest.size < seq) return null;
  return inclusionProofView(await inclusionProof(audit, seq, latest));
}
