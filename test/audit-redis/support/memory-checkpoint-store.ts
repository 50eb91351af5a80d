import type { Checkpoint, CheckpointStore } from '../../../src/audit/audit-log.js';

/** Checkpoints held in memory: the tests' stand-in for the ConfigMap (not a Redis double). */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly checkpoints: Checkpoint[] = [];

  constructor(private readonly retain = 100) {}

  list(): Promise<Checkpoint[]> {
    return Promise.resolve([...this.checkpoints]);
  }

  save(checkpoint: Checkpoint): Promise<void> {
    this.checkpoints.push(checkpoint);
    this.checkpoints.splice(0, Math.max(0, this.checkpoints.length - this.retain));
    return Promise.resolve();
  }
}
