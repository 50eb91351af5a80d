import { ProofError } from './merkle/verify-inclusion.js';
import { verifyConsistency } from './merkle/verify-consistency.js';
import type { TreeHash } from './merkle/tree-hash.js';
import { type CheckpointBody, parseCheckpoint } from './note/checkpoint-note.js';
import { keyFor } from './note/key-role.js';
import type { NoteVerifierKey } from './note/note-keys.js';
import { openNote } from './note/signed-note.js';

/**
 * That the newer of two signed checkpoints extends the older (`arbiter audit
 * verify-consistency`, and what a witness checks): both signed by the log key, one
 * origin, and the consistency proof leading from the older signed root to the newer.
 * Sizes and roots come from the signed notes only, never from the proof's sender. A
 * witness's key is refused: its cosignature says it saw a checkpoint, not that the log signed.
 */
export function verifyCheckpointConsistency(
  logKey: NoteVerifierKey,
  olderNote: string,
  newerNote: string,
  proof: readonly TreeHash[],
): { older: CheckpointBody; newer: CheckpointBody } {
  const keys = [keyFor('log', logKey)];
  const older = parseCheckpoint(openNote(olderNote, keys).text);
  const newer = parseCheckpoint(openNote(newerNote, keys).text);
  if (older.origin !== newer.origin) {
    throw new ProofError(`the checkpoints are of two origins: ${older.origin} and ${newer.origin}`);
  }
  verifyConsistency(older.size, newer.size, proof, older.root, newer.root);
  return { older, newer };
}
