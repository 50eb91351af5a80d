import { runTypeScriptNode } from '../../../test/support/typescript-child.js';

/** Shared by the file backend's tests (not part of the public surface). */

/** The URL of a source file of this folder, for a child's `import()`. */
export function sourceUrl(fileName: string): string {
  return new URL(`./${fileName}`, import.meta.url).href;
}

/**
 * Runs an ES module's text in a child node process and returns the JSON value of the last
 * line it prints: for what this process cannot do to itself, such as a file-size limit
 * (`fileSizeBlocks`, `ulimit -f`) or giving up root (`process.setuid` in the module).
 */
export async function runInChild(
  source: string,
  options: { fileSizeBlocks?: number } = {},
): Promise<unknown> {
  const stdout = await runTypeScriptNode(['--input-type=module', '--eval', source], options);
  const last = stdout.trim().split('\n').at(-1) ?? '';
  if (last === '') throw new Error('the child printed nothing');
  return JSON.parse(last);
}
