import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { CLI, REPO, removeDir, tempDir } from '../../support/arbiter-process.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `node dist/cli/main.js ARGS` from the repository folder, as a user runs `npx arbiter`. */
export function runArbiter(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** `arbiter serve` with the examples and these flags, expected to refuse to start: its output. */
export async function serveRefusal(dataDir: string, flags: readonly string[]): Promise<string> {
  const result = await runArbiter([
    'serve',
    '--api-keys',
    'examples/api-keys.yaml',
    '--manifests',
    'examples/manifests',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    ...flags,
  ]);
  if (result.code === 0) throw new Error(`arbiter serve ${flags.join(' ')} started:\n${result.stdout}`);
  return `${result.stdout}${result.stderr}`;
}

/**
 * A temp folder for one test file's fixtures, removed after it; `write` puts a file in it
 * (creating folders) and returns its path.
 */
export function useFixtureDir(prefix: string) {
  const fixture = { dir: '' };
  beforeAll(async () => {
    fixture.dir = await tempDir(prefix);
  });
  afterAll(async () => {
    await removeDir(fixture.dir);
  });
  const write = async (name: string, text: string): Promise<string> => {
    const path = join(fixture.dir, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    return path;
  };
  return { path: (name: string) => join(fixture.dir, name), write };
}
