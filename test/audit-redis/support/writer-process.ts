import { fileURLToPath } from 'node:url';
import { runTypeScriptNode } from '../../support/typescript-child.js';

const WRITER = fileURLToPath(new URL('./writer.ts', import.meta.url));

export interface WriterOutcome {
  n: number;
  seq?: number;
  id?: string;
  error?: string;
}

/** Runs writer.ts in its own node process and collects what it reports, one JSON line each. */
export async function runWriter(
  url: string,
  prefix: string,
  writer: string,
  count: number,
): Promise<WriterOutcome[]> {
  const stdout = await runTypeScriptNode([WRITER, url, prefix, writer, String(count)]);
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as WriterOutcome);
}
