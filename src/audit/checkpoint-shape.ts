import type { Checkpoint } from './audit-log.js';

/** A checkpoint as stored in checkpoints.json (the file and the ConfigMap hold the same). */
export function isCheckpoint(value: unknown): value is Checkpoint {
  const c = value as Partial<Checkpoint> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    Number.isSafeInteger(c.seq) &&
    typeof c.hash === 'string' &&
    typeof c.entry_id === 'string' &&
    typeof c.time === 'string' &&
    (c.note === undefined || typeof c.note === 'string') &&
    (c.cosignatures === undefined ||
      (Array.isArray(c.cosignatures) && c.cosignatures.every((line) => typeof line === 'string')))
  );
}

/** The note as served: the log's signature, then every witness's cosignature line. */
export function cosignedNote(checkpoint: Checkpoint & { note: string }): string {
  return `${checkpoint.note}${(checkpoint.cosignatures ?? []).join('')}`;
}

/** The newest checkpoint that carries a signed note. */
export function lastSigned(checkpoints: readonly Checkpoint[]): Checkpoint | undefined {
  return checkpoints.filter((c) => c.note !== undefined).at(-1);
}

/** A signed checkpoint was saved by someone else since the signer looked: sign again from it. */
export class CheckpointConflictError extends Error {
  readonly code = 'checkpoint_conflict';
}

/** Throws CheckpointConflictError unless the newest signed checkpoint is the expected note. */
export function checkPreviousNote(current: readonly Checkpoint[], expected: string | null): void {
  const actual = lastSigned(current)?.note ?? null;
  if (actual !== expected) {
    throw new CheckpointConflictError('another signed checkpoint was stored since this one was signed');
  }
}
