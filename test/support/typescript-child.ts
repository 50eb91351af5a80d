import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Module hooks that let a child `node` import the TypeScript sources (Node 20 cannot strip types). */
const REGISTER_TS = fileURLToPath(new URL('./register-ts.js', import.meta.url));

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
 * Runs `node` on TypeScript sources (`args` after node's own, e.g. a script and its
 * arguments) and resolves what it printed once it exits 0. `fileSizeBlocks` runs it under
 * `ulimit -f` (512 or 1024 bytes a block, depending on the shell).
 */
export function runTypeScriptNode(
  args: readonly string[],
  options: { fileSizeBlocks?: number } = {},
): Promise<string> {
  const nodeArgs = ['--import', REGISTER_TS, ...args];
  const [command, commandArgs] =
    options.fileSizeBlocks === undefined
      ? [process.execPath, nodeArgs]
      : [
          'sh',
          ['-c', `ulimit -f ${options.fileSizeBlocks} && exec "$0" "$@"`, process.execPath, ...nodeArgs],
        ];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...activeMutantEnv() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0)
        return reject(new Error(`node ${args.join(' ').slice(0, 80)} exited ${code}: ${stderr}`));
      resolve(stdout);
    });
  });
}
