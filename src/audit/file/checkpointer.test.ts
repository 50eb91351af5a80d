import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECKPOINTS_FILE, FileCheckpointStore } from './checkpoint-store.js';
import { Checkpointer, type HeadSnapshot } from './checkpointer.js';
import { recordingLogger, tempDir } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

const head = (seq: number): HeadSnapshot => ({ seq, hash: `sha256:${seq}`, entry_id: `aud_${seq}` });

describe('Checkpointer', () => {
  it('logs a checkpoint it could not save with its seq and cause, and does not fail', async () => {
    // A directory where the checkpoint file belongs: every save fails for real (EISDIR).
    await mkdir(join(dir, CHECKPOINTS_FILE));
    const { logged, logger } = recordingLogger();
    const store = new FileCheckpointStore({ dir, retain: 3 });
    const checkpointer = new Checkpointer(
      store,
      { entries: 2, seconds: 3600 },
      () => head(4),
      () => new Date(0),
      logger,
      0,
    );
    await expect(checkpointer.checkpoint(head(4))).resolves.toBeUndefined();
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { err: expect.objectContaining({ code: 'EISDIR' }) as unknown, seq: 4 },
        message: 'audit checkpoint could not be saved',
      },
    ]);
  });
});
