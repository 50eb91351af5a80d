import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSigningKey, parseVerifierKey } from '../../src/audit/note/note-keys.js';
import { startWitnessServer } from '../../src/witness/witness-server.js';
import { WitnessState } from '../../src/witness/witness-state.js';
import { runArbiter } from '../cli/support/cli-run.js';

export interface KeygenWitness {
  /** The verifier keys `arbiter audit keygen` printed: the log's (0x01) and the witness's (0x04). */
  logVkey: string;
  witnessVkey: string;
  /** The private key files it wrote. */
  logKeyFile: string;
  witnessKeyFile: string;
  /** The witness server's base URL (it cosigns checkpoints of `origin` signed by the log key). */
  witnessUrl: string;
  close(): Promise<void>;
}

async function keygen(name: string, file: string, witness: boolean): Promise<string> {
  const made = await runArbiter([
    'audit',
    'keygen',
    ...(witness ? ['--witness'] : []),
    '--origin',
    name,
    '--out',
    file,
  ]);
  if (made.code !== 0) throw new Error(`arbiter audit keygen failed: ${made.stderr}`);
  return made.stdout.trim();
}

/**
 * A log key and a witness key made in `dir` by `arbiter audit keygen` (dist/), as a user
 * makes them, and a real witness server on loopback holding the witness key.
 */
export async function keygenWitness(
  dir: string,
  origin: string,
  witnessName: string,
): Promise<KeygenWitness> {
  const logKeyFile = join(dir, 'log.key');
  const witnessKeyFile = join(dir, 'witness.key');
  const [logVkey, witnessVkey] = await Promise.all([
    keygen(origin, logKeyFile, false),
    keygen(witnessName, witnessKeyFile, true),
  ]);
  const { server, port } = await startWitnessServer(
    {
      key: parseSigningKey(await readFile(witnessKeyFile, 'utf8')),
      logKeys: new Map([[origin, [parseVerifierKey(logVkey)]]]),
      state: await WitnessState.open(join(dir, 'witness-state.json')),
    },
    0,
    '127.0.0.1',
  );
  return {
    logVkey,
    witnessVkey,
    logKeyFile,
    witnessKeyFile,
    witnessUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
