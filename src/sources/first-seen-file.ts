import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../fs/atomic-file.js';

/**
 * When each manifest object (by `Kind/name`) was first seen, kept in the data directory so
 * that a restart keeps it: manifests carry no creationTimestamp, yet listings show
 * `created_at` and the older of two conflicting objects wins.
 */
export class FirstSeenFile {
  private seen = new Map<string, string>();

  constructor(private readonly path: string) {}

  static inDataDir(dataDir: string): FirstSeenFile {
    return new FirstSeenFile(join(dataDir, 'first-seen.json'));
  }

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const raw = JSON.parse(text) as unknown;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return;
    this.seen = new Map(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }

  /** Notes the keys not seen before at `now`, and stores them when there were any. */
  async note(keys: Iterable<string>, now: Date): Promise<void> {
    let added = false;
    for (const key of keys)
      if (!this.seen.has(key)) {
        this.seen.set(key, now.toISOString());
        added = true;
      }
    if (added)
      await writeFileAtomically(this.path, `${JSON.stringify(Object.fromEntries(this.seen), null, 1)}\n`);
  }

  /** ISO 8601, when noted. */
  timeOf(key: string): string | undefined {
    return this.seen.get(key);
  }
}
