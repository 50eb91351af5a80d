import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import type { ConfigObject } from '../model/index.js';
import {
  isProblem,
  listManifestFiles,
  mergeManifestFiles,
  readManifestFile,
  type ManifestFile,
  type ManifestProblem,
} from './manifest-folder.js';

export interface ManifestSnapshot {
  objects: ConfigObject[];
  problems: ManifestProblem[];
  /** kind/name -> the file that defines it (relative to the folder). */
  fileOf: Map<string, string>;
}

/**
 * Keeps the objects of a manifests folder: reloads on change (debounced) and keeps the
 * last good content of a file that has become broken, reporting the problem.
 */
export class ManifestWatcher {
  private readonly lastGood = new Map<string, ManifestFile>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    private readonly debounceMs = 150,
  ) {}

  async load(): Promise<ManifestSnapshot> {
    const paths = await listManifestFiles(this.dir);
    const problems: ManifestProblem[] = [];
    const seen = new Set<string>();
    for (const path of paths) {
      const result = await readManifestFile(path, this.dir);
      const file = result.file;
      seen.add(file);
      if (isProblem(result)) {
        const kept = this.lastGood.has(file) ? '; keeping its last good content' : '';
        problems.push({ file, message: result.message + kept });
        continue;
      }
      this.lastGood.set(file, result);
    }
    for (const file of [...this.lastGood.keys()]) if (!seen.has(file)) this.lastGood.delete(file);
    const merged = mergeManifestFiles(
      [...this.lastGood.values()].sort((a, b) => a.file.localeCompare(b.file)),
    );
    for (const problem of [...problems, ...merged.problems])
      this.logger.warn({ file: problem.file }, problem.message);
    return { objects: merged.objects, problems: [...problems, ...merged.problems], fileOf: merged.fileOf };
  }

  /** Calls onChange with a fresh snapshot after files change; reloads never overlap. */
  watch(onChange: (snapshot: ManifestSnapshot) => Promise<void>): void {
    this.watcher = watch(this.dir, { recursive: true }, () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.reloading = this.reloading
          .then(async () => onChange(await this.load()))
          .catch((err: unknown) => this.logger.error({ err }, 'reloading manifests failed'));
      }, this.debounceMs);
    });
    this.watcher.on('error', (err) => this.logger.error({ err }, 'watching manifests failed'));
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.watcher?.close();
    await this.reloading;
  }
}
