import { readFile } from 'node:fs/promises';
import { verifyCheckpointConsistency } from '../audit/checkpoint-consistency.js';
import { errorText } from '../model/error-text.js';
import { verifierKeyArg } from './verifier-key-arg.js';
import { parseCommandLine, requireFlags, UsageError } from './command-line.js';

const HELP = `Usage: arbiter audit verify-consistency --vkey VKEY --proof PROOF OLD NEW

Proves, offline, that the log at checkpoint NEW extends the log at checkpoint OLD: no
entry of OLD's tree was changed or removed. OLD and NEW are signed checkpoints (GET
/api/v1/audit/checkpoint saved at two times); PROOF is the JSON answer of
GET /api/v1/audit/consistency?from=OLD_SIZE&to=NEW_SIZE, or one base64 hash per line.
Sizes and roots are taken from the signed checkpoints only. VKEY is the log's verifier
key (type 0x01), or a file holding it; a witness's key is refused: its cosignature says
that it saw a checkpoint, not that the log signed it.

Exit status: 0 consistent, 1 not (the reason on stderr), 2 usage error.
`;

function proofHashes(text: string): Buffer[] {
  const lines = text.trimStart().startsWith('{')
    ? ((JSON.parse(text) as { hashes?: unknown }).hashes as unknown[])
    : text.split('\n').filter((line) => line.trim() !== '');
  if (!Array.isArray(lines) || !lines.every((h) => typeof h === 'string'))
    throw new Error('the proof holds no list of hashes');
  return lines.map((h) => Buffer.from(h.trim(), 'base64'));
}

export async function runAuditVerifyConsistency(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    vkey: { type: 'string' },
    proof: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  requireFlags(values, ['vkey', 'proof']);
  if (positionals.length !== 2) throw new UsageError('name the checkpoints OLD and NEW');
  try {
    const [older, newer, proof] = await Promise.all([
      readFile(positionals[0]!, 'utf8'),
      readFile(positionals[1]!, 'utf8'),
      readFile(values.proof, 'utf8'),
    ]);
    const result = verifyCheckpointConsistency(
      await verifierKeyArg(values.vkey, { flag: '--vkey', role: 'log' }),
      older,
      newer,
      proofHashes(proof),
    );
    process.stdout.write(
      `consistent: ${result.newer.origin} at size ${result.newer.size} extends size ${result.older.size}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err; // a key of the wrong role: main reports it
    process.stderr.write(`NOT CONSISTENT: ${errorText(err)}\n`);
    return 1;
  }
}
