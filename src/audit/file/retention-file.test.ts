import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RetentionAnchor } from '../audit-log.js';
import { RETENTION_FILE, RetentionFile } from './retention-file.js';
import { tempDir } from './test-fixtures.js';

let dir: string;
let path: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, RETENTION_FILE);
});
afterEach(() => cleanup());

const ANCHOR: RetentionAnchor = {
  seq: 1,
  hash: 'b'.repeat(64),
  entry_id: 'aud_1',
  checkpoint_time: '2025-01-02T00:00:00.000Z',
  archived_at: '2025-01-03T00:00:00.000Z',
  archive: 'audit-2025-01-03.jsonl',
};

describe('RetentionFile', () => {
  it('reads nothing before the first archive', async () => {
    expect(await new RetentionFile(dir).read()).toBeNull();
  });

  it('reads back the anchor it wrote, from seq 1 on', async () => {
    const file = new RetentionFile(dir);
    await file.write(ANCHOR);
    expect(await file.read()).toEqual(ANCHOR);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ anchor: ANCHOR });
  });

  it('fails, rather than start as if never archived, when the file cannot be read', async () => {
    await mkdir(path);
    await expect(new RetentionFile(dir).read()).rejects.toMatchObject({ code: 'EISDIR' });
  });

  const { seq: _, ...withoutSeq } = ANCHOR;
  it.each<[string, unknown]>([
    ['no anchor', {}],
    ['a null anchor', { anchor: null }],
    ['an anchor that is a string', { anchor: 'audit-2025-01-03.jsonl' }],
    ['no seq', { anchor: withoutSeq }],
    ['seq as a string', { anchor: { ...ANCHOR, seq: '5' } }],
    ['a fractional seq', { anchor: { ...ANCHOR, seq: 1.5 } }],
    ['seq 0 (nothing archived)', { anchor: { ...ANCHOR, seq: 0 } }],
    ['a negative seq', { anchor: { ...ANCHOR, seq: -3 } }],
    ...(['hash', 'entry_id', 'checkpoint_time', 'archived_at', 'archive'] as const).flatMap(
      (key): [string, unknown][] => [
        [`no ${key}`, { anchor: { ...ANCHOR, [key]: undefined } }],
        [`${key} that is no string`, { anchor: { ...ANCHOR, [key]: 42 } }],
      ],
    ),
  ])('refuses a damaged anchor: %s', async (_, content) => {
    await writeFile(path, JSON.stringify(content));
    await expect(new RetentionFile(dir).read()).rejects.toMatchObject({
      code: 'INTERNAL',
      message: `${path} does not hold a retention anchor`,
    });
  });
});
