// Bundles the console (console/src) into dist/console: app.js, app.css and index.html.
// Run by `npm run build` after tsc; prints each file's size, raw and gzipped.
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('../dist/console/');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: [here('src/main.tsx')],
  outfile: `${out}app.js`,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(here('index.html'), `${out}index.html`);

let raw = 0;
let gzipped = 0;
for (const name of (await readdir(out)).sort()) {
  const bytes = await readFile(`${out}${name}`);
  raw += bytes.length;
  gzipped += gzipSync(bytes).length;
}
process.stdout.write(`console: dist/console, ${raw} bytes (${gzipped} gzipped)\n`);
