import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Shared by the file backend's tests (not part of the public surface). */

/** Module hooks that let a child `node` import the TypeScript sources (Node 20 cannot strip types). */
const REGISTER_TS = fileURLToPath(
  new URL('../../../test/audit-redis/support/register-ts.js', import.meta.url),
);

/** The URL of a source file of this folder, for a child's `import()`. */
export function sourceUrl(fileName: string): string {
  return new URL(`./${fileName}`, import.meta.url).href;
}

/**
 * Under Stryker the instrumented sources pick the active mutant up from this variable in
 * a process of their own: without it a child would run the unmutated code.
 */
function activeMutantEnv(): Record<string, string> {
  const active = (globalThis as { __stryker__?: { activeMutant?: string | number } }).__stryker__
    ?.activeMutant;
  return active === undefined ? {} : { __STRYKER_ACTIVE_MUTANT__: String(active) };
}

/**
 * Runs an ES module's text in a child node process and returns the JSON value of the last
 * line it prints: for what this process cannot do to itself, such as a file-size limit
 * (`fileSizeBlocks`, `ulimit -f`: 512 or 1024 bytes a block, depending on the shell) or
 * giving up root (`process.setuid` in the module).
 */
export function runInChild(source: string, options: { fileSizeBlocks?: number } = {}): Promise<unknown> {
  const nodeArgs = ['--import', REGISTER_TS, '--input-type=module', '--eval', source];
  const [command, args] =
    options.fileSizeBlocks === undefined
      ? [process.execPath, nodeArgs]
      : [
          'sh',
          ['-c', `ulimit -f ${options.fileSizeBlocks} && exec "$0" "$@"`, process.execPath, ...nodeArgs],
        ];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...activeMutantEnv() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || last === '') return reject(new Error(`child exited ${code}: ${stderr}`));
      resolve(JSON.parse(last));
    });
  });
}
