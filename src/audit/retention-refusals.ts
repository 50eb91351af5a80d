import { ArbiterError } from '../model/index.js';
import type { AuditEntry, RetentionAnchor } from './audit-log.js';

/** Why a log will not trim to an anchor: the same codes and words from every backend. */

/** Not an anchor at all: no entry's seq, or no hash. */
export function checkAnchorShape(anchor: RetentionAnchor): void {
  if (!Number.isSafeInteger(anchor.seq) || anchor.seq < 1 || typeof anchor.hash !== 'string') {
    throw new ArbiterError('INVALID_REQUEST', `not a retention anchor: seq ${anchor.seq}`);
  }
}

/** An anchor behind the recorded one, or at its seq with another hash, would move the log back. */
export function movesBack(anchor: RetentionAnchor, recordedSeq: number): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    anchor.seq === recordedSeq
      ? `the audit log is archived up to seq ${recordedSeq} with another hash than ${anchor.hash}`
      : `the audit log is already archived up to seq ${recordedSeq}; an anchor at seq ${anchor.seq} would move it back`,
  );
}

export function noEntryAt(anchor: RetentionAnchor): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    `the audit log holds no entry at seq ${anchor.seq}: not a retention anchor`,
  );
}

export function otherEntryAt(anchor: RetentionAnchor, entry: AuditEntry): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    `the audit entry at seq ${anchor.seq} is ${entry.id} with hash ${entry.hash}, not the anchor's ${anchor.entry_id} with hash ${anchor.hash}`,
  );
}

export function treeBehind(anchor: RetentionAnchor): ArbiterError {
  return new ArbiterError(
    'CONFLICT',
    `the Merkle tree has not caught up to seq ${anchor.seq} yet; try again`,
  );
}
