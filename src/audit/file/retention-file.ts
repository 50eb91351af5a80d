import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../../fs/atomic-file.js';
import { ArbiterError } from '../../model/index.js';
import type { RetentionAnchor } from '../audit-log.js';

export const RETENTION_FILE = 'retention.json';

function isAnchor(value: unknown): value is RetentionAnchor {
  const a = value as Partial<RetentionAnchor> | null;
  return (
    typeof a === 'object' &&
    a !== null &&
    Number.isSafeInteger(a.seq) &&
    (a.seq ?? 0) >= 1 &&
    ['hash', 'entry_id', 'checkpoint_time', 'archived_at', 'archive'].every(
      (key) => typeof (a as Record<string, unknown>)[key] === 'string',
    )
  );
}

/**
 * The retention anchor of the file log in `retention.json` ({"anchor": {...}}): where the
 * retained log starts after archiving. Replaced atomically; absent until the first archive.
 */
export class RetentionFile {
  readonly path: string;

  constructor(dir: string) {
    this.path = join(dir, RETENTION_FILE);
  }

  async read(): Promise<RetentionAnchor | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const anchor = (JSON.parse(text) as { anchor?: unknown }).anchor;
    // A damaged anchor must stop the start: guessing would hide or invent a break.
    if (!isAnchor(anchor))
      throw new ArbiterError('INTERNAL', `${this.path} does not hold a retention anchor`);
    return anchor;
  }

  write(anchor: RetentionAnchor): Promise<void> {
    return writeFileAtomically(this.path, `${JSON.stringify({ anchor }, null, 2)}\n`, 0o640);
  }
}
