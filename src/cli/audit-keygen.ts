import { open } from 'node:fs/promises';
import { NoteError } from '../audit/note/note-error.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  SIGNATURE_TYPE,
} from '../audit/note/note-keys.js';
import { parseCommandLine, requireFlags, runCommand, UsageError } from './command-line.js';

const HELP = `Usage: arbiter audit keygen --origin ORIGIN --out FILE [--witness]

Creates an Ed25519 key for signing audit checkpoints (C2SP signed-note). Writes the
private key to FILE (mode 0600; an existing file is never overwritten) and prints the
verifier key (name+keyhash+base64) that auditors and witnesses check signatures with.
ORIGIN names the log, as a schema-less URL (arbiter.example.com/prod-audit): it is the
key's name and the first line of every checkpoint.

Serve with it: arbiter serve --audit-signing-key FILE (a Secret in the Helm chart).
With --witness, the key is a witness's cosigning key (C2SP tlog-cosignature, type 0x04)
for "arbiter witness --key FILE", ORIGIN the witness's name, and the printed verifier
key is the one "--witness-vkey" takes.
Exit status: 0 written, 1 FILE cannot be written, 2 usage error or FILE exists.
`;

interface KeygenOptions {
  origin: string;
  out: string;
  witness: boolean;
}

export function runAuditKeygen(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), keygen);
}

function parseOptions(argv: string[]): KeygenOptions | 'help' {
  const { values } = parseCommandLine(
    argv,
    {
      origin: { type: 'string' },
      out: { type: 'string' },
      witness: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    'none',
  );
  if (values.help) return 'help';
  requireFlags(values, ['origin', 'out']);
  return { origin: values.origin, out: values.out, witness: values.witness };
}

async function keygen(values: KeygenOptions): Promise<number> {
  let key;
  try {
    key = generateSigningKey(
      values.origin,
      values.witness ? SIGNATURE_TYPE.cosignatureV1 : SIGNATURE_TYPE.ed25519,
    );
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
    throw new UsageError(`--origin: ${err.message}`);
  }
  try {
    // 'wx': fail if the file exists, so a key in use is never replaced by accident.
    const file = await open(values.out, 'wx', 0o600);
    try {
      await file.writeFile(`${formatSigningKey(key)}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    process.stderr.write(
      `arbiter audit keygen: cannot write ${values.out}: the file exists (never overwritten)\n`,
    );
    return 2;
  }
  process.stdout.write(`${formatVerifierKey(key)}\n`);
  return 0;
}
