import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REGISTER = fileURLToPath(new URL('./register-ts.js', import.meta.url));
const WRITER = fileURLToPath(new URL('./writer.ts', import.meta.url));

export interface WriterOutcome {
  n: number;
  seq?: number;
  id?: string;
  error?: string;
}

/** Runs writer.ts in its own node process and collects what it reports. */
export function runWriter(
  url: string,
  prefix: string,
  writer: string,
  count: number,
): Promise<WriterOutcome[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', REGISTER, WRITER, url, prefix, writer, String(count)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`writer ${writer} exited ${code}: ${stderr}`));
      resolve(
        stdout
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as WriterOutcome),
      );
    });
  });
}
