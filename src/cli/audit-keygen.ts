import { open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { NoteError } from '../audit/note/note-error.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  SIGNATURE_TYPE,
} from '../audit/note/note-keys.js';

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
Exit status: 0 written, 2 usage error or FILE exists.
`;

export async function runAuditKeygen(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      origin: { type: 'string' },
      out: { type: 'string' },
      witness: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || values.origin === undefined || values.out === undefined) {
    process.stdout.write(HELP);
    return values.help ? 0 : 2;
  }
  let key;
  try {
    key = generateSigningKey(
      values.origin,
      values.witness ? SIGNATURE_TYPE.cosignatureV1 : SIGNATURE_TYPE.ed25519,
    );
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
    process.stderr.write(`arbiter audit keygen: ${err.message}\n`);
    return 2;
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
    const code = (err as NodeJS.ErrnoException).code;
    process.stderr.write(
      `arbiter audit keygen: cannot write ${values.out}: ${code === 'EEXIST' ? 'the file exists (never overwritten)' : String(err)}\n`,
    );
    return 2;
  }
  process.stdout.write(`${formatVerifierKey(key)}\n`);
  return 0;
}
