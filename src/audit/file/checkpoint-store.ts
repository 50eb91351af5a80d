import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../../fs/atomic-file.js';
import { ArbiterError } from '../../model/index.js';
import type { Checkpoint, CheckpointStore } from '../audit-log.js';
import { checkPreviousNote, isCheckpoint } from '../checkpoint-shape.js';

export const CHECKPOINTS_FILE = 'checkpoints.json';

export interface FileCheckpointStoreOptions {
  dir: string;
  /** Newest checkpoints kept; older ones are dropped on save. */
  retain: number;
}

/**
 * Checkpoints in `checkpoints.json` ({"checkpoints": [...]}, oldest first), the format
 * `arbiter audit verify --checkpoint` reads. Every save replaces the file atomically:
 * write a temporary file, fsync it, rename it over the old one, fsync the directory.
 */
export class FileCheckpointStore implements CheckpointStore {
  private cache: Checkpoint[] | undefined;
  private saving: Promise<void> = Promise.resolve();
  readonly path: string;

  constructor(private readonly options: FileCheckpointStoreOptions) {
    if (!Number.isSafeInteger(options.retain) || options.retain < 1) {
      throw new ArbiterError('INVALID_REQUEST', 'retainCheckpoints must be a positive integer');
    }
    this.path = join(options.dir, CHECKPOINTS_FILE);
  }

  async list(): Promise<Checkpoint[]> {
    this.cache ??= await this.load();
    return this.cache.map((c) => ({ ...c }));
  }

  save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void> {
    // Serialised so that two saves never race on the temporary file.
    const run = this.saving.then(async () => {
      const current = await this.list();
      if (options) checkPreviousNote(current, options.previousNote);
      // Never replace a checkpoint: one naming another hash at this seq is evidence of a rewrite.
      if (current.some((c) => c.seq === checkpoint.seq)) return;
      const next = [...current, { ...checkpoint }].sort((a, b) => a.seq - b.seq).slice(-this.options.retain);
      await this.write(next);
      this.cache = next;
    });
    this.saving = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<Checkpoint[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const document = JSON.parse(text) as { checkpoints?: unknown };
    const list = document.checkpoints;
    if (!Array.isArray(list) || !list.every(isCheckpoint)) {
      throw new ArbiterError('INTERNAL', `${this.path} does not hold a checkpoint list`);
    }
    return [...list].sort((a, b) => a.seq - b.seq);
  }

  private write(checkpoints: Checkpoint[]): Promise<void> {
    return writeFileAtomically(this.path, `${JSON.stringify({ checkpoints }, null, 2)}\n`, 0o640);
  }
}
