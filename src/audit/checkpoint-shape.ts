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
    typeof c.time === 'string'
  );
}
