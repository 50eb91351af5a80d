import type { Checkpoint, CheckpointStore } from './audit-log.js';
import { checkPreviousNote } from './checkpoint-shape.js';

/** Checkpoints held in memory: the tests' stand-in for the ConfigMap (not a Redis double). */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly checkpoints: Checkpoint[] = [];
  /** While set, list and save fail with it, as an unreachable ConfigMap does. */
  outage: Error | undefined;
  /** How often list was called: what a cache in front of the store saves. */
  lists = 0;

  constructor(private readonly retain = 100) {}

  async list(): Promise<Checkpoint[]> {
    this.lists += 1;
    if (this.outage) throw this.outage;
    return Promise.resolve([...this.checkpoints]);
  }

  async save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void> {
    if (this.outage) throw this.outage;
    if (options) checkPreviousNote(this.checkpoints, options.previousNote);
    this.checkpoints.push(checkpoint);
    this.checkpoints.splice(0, Math.max(0, this.checkpoints.length - this.retain));
    return Promise.resolve();
  }
}
