import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Checkpoint } from '../audit-log.js';
import { CHECKPOINTS_FILE, FileCheckpointStore } from './checkpoint-store.js';
import { tempDir } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

const checkpoint = (seq: number, hash = `sha256:${seq}`): Checkpoint => ({
  seq,
  hash,
  entry_id: `aud_${seq}`,
  time: '2025-01-01T00:00:00.000Z',
});

describe('FileCheckpointStore', () => {
  it('is empty without a file and keeps the newest K, oldest first, across instances', async () => {
    const store = new FileCheckpointStore({ dir, retain: 3 });
    expect(await store.list()).toEqual([]);
    await Promise.all([1, 2, 3, 4, 5].map((seq) => store.save(checkpoint(seq))));
    expect((await store.list()).map((c) => c.seq)).toEqual([3, 4, 5]);
    const again = new FileCheckpointStore({ dir, retain: 3 });
    expect(await again.list()).toEqual([checkpoint(3), checkpoint(4), checkpoint(5)]);
    expect(await readdir(dir)).toEqual([CHECKPOINTS_FILE]);
  });

  it('keeps exactly one checkpoint, the newest, when told to retain 1', async () => {
    const store = new FileCheckpointStore({ dir, retain: 1 });
    for (const seq of [3, 8, 5]) await store.save(checkpoint(seq));
    expect(await store.list()).toEqual([checkpoint(8)]);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses to keep %s checkpoints', (retain) => {
    expect(() => new FileCheckpointStore({ dir, retain })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        message: 'retainCheckpoints must be a positive integer',
      }) as Error,
    );
  });

  it('lists by seq and keeps the newest K whatever order the saves come in', async () => {
    const store = new FileCheckpointStore({ dir, retain: 3 });
    for (const seq of [9, 4, 12, 1, 7]) await store.save(checkpoint(seq));
    expect((await store.list()).map((c) => c.seq)).toEqual([7, 9, 12]);
    expect((await new FileCheckpointStore({ dir, retain: 3 }).list()).map((c) => c.seq)).toEqual([7, 9, 12]);
  });

  it('never replaces an existing checkpoint at the same seq', async () => {
    const store = new FileCheckpointStore({ dir, retain: 3 });
    await store.save(checkpoint(7, 'sha256:old'));
    await store.save(checkpoint(7, 'sha256:new'));
    expect(await store.list()).toEqual([checkpoint(7, 'sha256:old')]);
  });

  it('writes the {checkpoints: [...]} document the CLI reads', async () => {
    await new FileCheckpointStore({ dir, retain: 2 }).save(checkpoint(1));
    const document = JSON.parse(await readFile(join(dir, CHECKPOINTS_FILE), 'utf8')) as unknown;
    expect(document).toEqual({ checkpoints: [checkpoint(1)] });
  });

  it('refuses a file whose cosignatures are not a list of lines', async () => {
    await writeFile(
      join(dir, CHECKPOINTS_FILE),
      JSON.stringify({ checkpoints: [{ ...checkpoint(1), note: 'n\n', cosignatures: [7] }] }),
    );
    await expect(new FileCheckpointStore({ dir, retain: 2 }).list()).rejects.toMatchObject({
      code: 'INTERNAL',
    });
  });

  it('refuses a file that holds no checkpoint list', async () => {
    await writeFile(join(dir, CHECKPOINTS_FILE), '{"checkpoints": [{"seq": "x"}]}');
    await expect(new FileCheckpointStore({ dir, retain: 2 }).list()).rejects.toMatchObject({
      code: 'INTERNAL',
    });
  });

  it('refuses a list with one bad checkpoint among good ones, naming the file', async () => {
    const path = join(dir, CHECKPOINTS_FILE);
    await writeFile(path, JSON.stringify({ checkpoints: [checkpoint(1), { seq: 'x' }, checkpoint(3)] }));
    await expect(new FileCheckpointStore({ dir, retain: 5 }).list()).rejects.toMatchObject({
      code: 'INTERNAL',
      message: `${path} does not hold a checkpoint list`,
    });
  });

  it('lists a file written out of order by seq, oldest first', async () => {
    await writeFile(
      join(dir, CHECKPOINTS_FILE),
      JSON.stringify({ checkpoints: [checkpoint(9), checkpoint(2), checkpoint(5)] }),
    );
    expect(await new FileCheckpointStore({ dir, retain: 5 }).list()).toEqual([
      checkpoint(2),
      checkpoint(5),
      checkpoint(9),
    ]);
  });
});
