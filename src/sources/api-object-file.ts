import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validateConfigObject } from '../index/index.js';
import { ArbiterError, type ConfigObject } from '../model/index.js';
import { writeFileAtomically } from '../fs/atomic-file.js';

/**
 * Objects written through the API in embedded mode, kept in one JSON file that is
 * replaced atomically (write, fsync, rename, fsync the folder), so a crash leaves
 * either the old or the new content.
 */
export class ApiObjectFile {
  constructor(private readonly path: string) {}

  static inDataDir(dataDir: string): ApiObjectFile {
    return new ApiObjectFile(join(dataDir, 'api-objects.json'));
  }

  async read(): Promise<ConfigObject[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const raw = JSON.parse(text) as unknown;
    if (!Array.isArray(raw))
      throw new ArbiterError('INTERNAL', `${this.path} does not hold a list of objects`);
    return raw.map((item, index) => {
      const checked = validateConfigObject(item);
      if (!checked.ok)
        throw new ArbiterError('INTERNAL', `${this.path}, object ${index + 1}: ${checked.errors.join('; ')}`);
      return checked.object;
    });
  }

  async write(objects: readonly ConfigObject[]): Promise<void> {
    await writeFileAtomically(this.path, `${JSON.stringify(objects, null, 1)}\n`);
  }
}
