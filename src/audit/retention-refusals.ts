import { ArbiterError } from '../model/index.js';
import type { AuditEntry, RetentionAnchor } from './audit-log.js';

/** Why a log will not trim to an anchor: the same codes and words from every backend. */

/** Not an anchor at all: no entry's seq, or no hash. */
export function checkAnchorShape(anchor: RetentionAnchor): void {
  if (!Number.isSafeInteger(anchor.seq) || anchor.seq < 1 || typeof anchor.hash !== 'string') {
    throw new ArbiterError('INVALID_REQUEST', `not a retention anchor: seq ${anchor.seq}`);
  }
}

/** Refuses an anchor behind the recorded one, or at its seq with another hash: it would move the log back. */
export function checkAnchorFollows(anchor: RetentionAnchor, recorded: RetentionAnchor | null): void {
  if (
    recorded &&
    (recorded.seq > anchor.seq || (recorded.seq === anchor.seq && recorded.hash !== anchor.hash))
  ) {
    throw movesBack(anchor, recorded.seq);
  }
}

/** What an anchor at or behind the recorded seq would do: move the log back. */
export function movesBack(anchor: RetentionAnchor, recordedSeq: number): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    anchor.seq === recordedSeq
      ? `the audit log is archived up to seq ${recordedSeq} with another hash than ${anchor.hash}`
      : `the audit log is already archived up to seq ${recordedSeq}; an anchor at seq ${anchor.seq} would move it back`,
  );
}

/** Refuses an anchor that is not the entry the log holds at its seq (`entry`, if any). */
export function checkAnchorEntry(anchor: RetentionAnchor, entry: AuditEntry | undefined): void {
  if (!entry) {
    throw new ArbiterError(
      'CONFLICT',
      `the audit log holds no entry at seq ${anchor.seq}: not a retention anchor`,
    );
  }
  if (entry.hash !== anchor.hash || entry.id !== anchor.entry_id) {
    throw new ArbiterError(
      'CONFLICT',
      `the audit entry at seq ${anchor.seq} is ${entry.id} with hash ${entry.hash}, not the anchor's ${anchor.entry_id} with hash ${anchor.hash}`,
    );
  }
}

export function treeBehind(anchor: RetentionAnchor): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    `the Merkle tree has not caught up to seq ${anchor.seq} yet; try again`,
  );
}
