import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { sealEntry } from '../chain.js';
import { readEntries } from './entry-reader.js';
import { openLogFile } from './log-file.js';
import { event, tempDir, writeIndexedLines } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

describe('EntryIndex', () => {
  it('names the first entry of an id the file holds twice: a later line cannot shadow it', async () => {
    const first = sealEntry({ id: 'aud_1', ...event({ decision_id: 'dec-1' }) }, null);
    const second = sealEntry({ id: 'aud_2', ...event({ decision_id: 'dec-2' }) }, first);
    // A line appended later that reuses the first entry's id, with another outcome.
    const forged: AuditEntry = sealEntry(
      { id: 'aud_1', ...event({ decision_id: 'dec-1', outcome: 'DENY' }) },
      second,
    );
    const path = join(dir, 'audit.log');
    const index = await writeIndexedLines(path, [first, second, forged]);
    expect(index.positionOfId('aud_1')).toBe(0);
    const file = await openLogFile(path);
    try {
      expect(await readEntries(file, index, [index.positionOfId('aud_1')!])).toEqual([first]);
    } finally {
      await file.close();
    }
  });
});
