import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { renderCrdFiles } from './crd-manifests.js';

/**
 * Writes crds/ from src/model/spec-schemas.ts: `npm run gen:crds [-- <dir>]`.
 * Files that are no longer generated (a renamed kind) are removed.
 */
async function main(outDir: string): Promise<void> {
  const files = renderCrdFiles();
  await mkdir(outDir, { recursive: true });
  for (const existing of await readdir(outDir)) {
    if (existing.endsWith('.yaml') && !files.has(existing)) await rm(join(outDir, existing));
  }
  for (const [name, text] of files) {
    await writeFile(join(outDir, name), text);
    process.stdout.write(`wrote ${join(outDir, name)}\n`);
  }
}

main(resolve(process.argv[2] ?? 'crds')).catch((err: unknown) => {
  process.stderr.write(`gen-crds: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
