import { readFile } from 'node:fs/promises';
import type { AuditEntry } from '../audit/audit-log.js';
import { verifyEntryProof } from '../audit/entry-proof.js';
import { errorText } from '../model/error-text.js';
import { verifierKeyArg } from './verifier-key-arg.js';
import { parseCommandLine, requireFlags, UsageError } from './command-line.js';
import { parseTlogProof, type TlogProof } from '../audit/note/tlog-proof.js';

const HELP = `Usage: arbiter audit verify-proof --vkey VKEY --entry ENTRY.json --proof PROOF
                                   [--witness-vkey VKEY]... [--quorum N]

Proves, offline, that one audit entry is in the log: checks the checkpoint's signature
with the log's verifier key, takes the tree size and root only from that signed
checkpoint, recomputes the entry's leaf (RFC 8785 JSON without "hash") and walks the
inclusion path to the root (RFC 6962).

  VKEY       the log's verifier key (name+keyhash+base64, as "arbiter audit keygen"
             printed it), or a file holding it: a log key (type 0x01)
  ENTRY.json the entry as GET /api/v1/audit/log returns it (one object)
  PROOF      GET /api/v1/audit/proof/SEQ?format=tlog-proof, or its JSON answer
  --witness-vkey, --quorum   require N cosignatures by these witnesses (witness keys,
             type 0x04, as "arbiter audit keygen --witness" printed them)

A witness's cosignature says that it saw the checkpoint, not that the log signed it: a
witness key is refused as --vkey, and the log's key as --witness-vkey.

Exit status: 0 proven, 1 not proven (the reason on stderr), 2 usage error.
`;

const LOG_KEY = { flag: '--vkey', role: 'log', otherFlag: '--witness-vkey' } as const;
const WITNESS_KEY = { flag: '--witness-vkey', role: 'witness', otherFlag: '--vkey' } as const;

/** The tlog-proof text, or the JSON answer of /audit/proof. */
function proofOf(text: string): TlogProof {
  if (!text.trimStart().startsWith('{')) return parseTlogProof(text);
  const json = JSON.parse(text) as { leaf_index?: unknown; hashes?: unknown; checkpoint?: unknown };
  if (
    !Number.isSafeInteger(json.leaf_index) ||
    !Array.isArray(json.hashes) ||
    typeof json.checkpoint !== 'string'
  ) {
    throw new Error('the proof JSON needs leaf_index, hashes and checkpoint');
  }
  return parseTlogProof(
    `c2sp.org/tlog-proof@v1\nindex ${String(json.leaf_index)}\n${(json.hashes as string[]).map((h) => `${h}\n`).join('')}\n${json.checkpoint}`,
  );
}

export async function runAuditVerifyProof(argv: string[]): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      vkey: { type: 'string' },
      entry: { type: 'string' },
      proof: { type: 'string' },
      'witness-vkey': { type: 'string', multiple: true },
      quorum: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    'none',
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  requireFlags(values, ['vkey', 'entry', 'proof']);
  const witnessVkeys = values['witness-vkey'] ?? [];
  // Without --quorum, every witness named must have cosigned.
  const quorum = Number(values.quorum ?? witnessVkeys.length);
  if (!Number.isSafeInteger(quorum) || quorum < 0) throw new UsageError('--quorum must be a whole number');
  try {
    process.stdout.write(
      `${await prove({ vkey: values.vkey, entry: values.entry, proof: values.proof, witnessVkeys, quorum })}\n`,
    );
    return 0;
  } catch (err) {
    return notProven(err);
  }
}

/** A key given for the wrong role is a usage error (main reports it, exit 2); anything else was not proven (exit 1). */
function notProven(err: unknown): number {
  if (err instanceof UsageError) throw err;
  process.stderr.write(`NOT PROVEN: ${errorText(err)}\n`);
  return 1;
}

/** Verifies and says what was proven; throws the reason otherwise. */
async function prove(options: {
  vkey: string;
  entry: string;
  proof: string;
  witnessVkeys: string[];
  quorum: number;
}): Promise<string> {
  const logKey = await verifierKeyArg(options.vkey, LOG_KEY);
  const witnesses = await Promise.all(options.witnessVkeys.map((vkey) => verifierKeyArg(vkey, WITNESS_KEY)));
  const entry = JSON.parse(await readFile(options.entry, 'utf8')) as AuditEntry;
  const proof = proofOf(await readFile(options.proof, 'utf8'));
  const result = verifyEntryProof({
    logKey,
    entry,
    proof,
    witnesses: { keys: witnesses, quorum: options.quorum },
  });
  const cosigned = result.cosignedBy.length > 0 ? `, cosigned by ${result.cosignedBy.join(', ')}` : '';
  return `proven: entry seq ${entry.seq} is leaf ${result.leafIndex} of ${result.checkpoint.origin} at tree size ${result.checkpoint.size}, signed by ${logKey.name}${cosigned}`;
}
