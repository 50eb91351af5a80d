import type { Checkpoint, CheckpointStore } from '../../../src/audit/audit-log.js';
import { checkPreviousNote } from '../../../src/audit/checkpoint-shape.js';

/** Checkpoints held in memory: the tests' stand-in for the ConfigMap (not a Redis double). */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly checkpoints: Checkpoint[] = [];

  constructor(private readonly retain = 100) {}

  list(): Promise<Checkpoint[]> {
    return Promise.resolve([...this.checkpoints]);
  }

  async save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void> {
    if (options) checkPreviousNote(this.checkpoints, options.previousNote);
    this.checkpoints.push(checkpoint);
    this.checkpoints.splice(0, Math.max(0, this.checkpoints.length - this.retain));
    return Promise.resolve();
  }
}
