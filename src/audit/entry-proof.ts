import type { AuditEntry } from './audit-log.js';
import { entryLeafHash } from './chain.js';
import { ProofError, verifyInclusion } from './merkle/verify-inclusion.js';
import { type CheckpointBody, parseCheckpoint } from './note/checkpoint-note.js';
import { keyFor } from './note/key-role.js';
import { type NoteVerifierKey, sameKey } from './note/note-keys.js';
import { openNote } from './note/signed-note.js';
import type { TlogProof } from './note/tlog-proof.js';

export interface EntryProofCheck {
  /** The log's verifier key: size and root are taken from the checkpoint it signed, nothing else. */
  logKey: NoteVerifierKey;
  entry: AuditEntry;
  proof: TlogProof;
  /** Witness keys and how many of them must have cosigned the checkpoint. */
  witnesses?: { keys: NoteVerifierKey[]; quorum: number };
}

export interface EntryProofResult {
  checkpoint: CheckpointBody;
  leafIndex: number;
  /** Names of the witnesses whose cosignatures verified. */
  cosignedBy: string[];
}

/**
 * The offline check of one audit entry (`arbiter audit verify-proof`): the checkpoint's
 * signature by the log's key, a quorum of witness cosignatures when asked, the leaf
 * recomputed from the entry itself (RFC 8785 JSON without `hash`), its index from its
 * seq, and the inclusion path up to the signed root. Any failure throws with the reason;
 * a witness key given as the log key, or the log key as a witness's, is refused first.
 */
export function verifyEntryProof(check: EntryProofCheck): EntryProofResult {
  const logKey = keyFor('log', check.logKey);
  const witnessKeys = (check.witnesses?.keys ?? []).map((key) => keyFor('witness', key));
  const opened = openNote(check.proof.checkpoint, [logKey, ...witnessKeys]);
  if (!opened.verified.some((s) => sameKey(s, logKey))) {
    throw new ProofError(`the checkpoint is not signed by the log key ${logKey.name}`);
  }
  const cosignedBy = opened.verified.filter((s) => witnessKeys.some((k) => sameKey(k, s))).map((s) => s.name);
  const quorum = check.witnesses?.quorum ?? 0;
  if (cosignedBy.length < quorum) {
    throw new ProofError(
      `the checkpoint has ${cosignedBy.length} of the ${quorum} witness cosignatures required`,
    );
  }
  const checkpoint = parseCheckpoint(opened.text);
  const leafIndex = check.entry.seq - 1;
  if (!Number.isSafeInteger(leafIndex) || leafIndex !== check.proof.index) {
    throw new ProofError(
      `the entry has seq ${check.entry.seq} but the proof is for leaf index ${check.proof.index}`,
    );
  }
  verifyInclusion(
    leafIndex,
    checkpoint.size,
    entryLeafHash(check.entry),
    [...check.proof.hashes],
    checkpoint.root,
  );
  return { checkpoint, leafIndex, cosignedBy };
}
