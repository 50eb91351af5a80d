import { readFile } from 'node:fs/promises';
import { text as streamText } from 'node:stream/consumers';
import { NoteError } from '../audit/note/note-error.js';
import { checkReceipt, type ReceiptExpectations } from '../mcp/receipt-check.js';
import { ReceiptError } from '../mcp/receipt-error.js';
import { parseCommandLine, requireFlags, UsageError } from './command-line.js';
import { verifierKeyArg } from './verifier-key-arg.js';

export const RECEIPT_VERIFY_HELP = `Usage: arbiter receipt verify --vkey VKEY [--arguments FILE] [--capability NAME] [FILE]

Checks the receipt Arbiter's MCP tool proxy signed for a forwarded call (what the upstream
got in params._meta["dev.arbiter/receipt"], and the trail shows as execution.receipt): one
signature, by the key, over the seven lines of arbiter-receipt/v1.

  VKEY          the verifier key of Arbiter's --audit-signing-key (name+keyhash+base64, as
                "arbiter audit keygen" printed it), or a file holding it
  FILE          the receipt (standard input without FILE); blank lines at its end are ignored
  --arguments   a JSON file of the call's arguments: the receipt must be for exactly these
  --capability  the capability the receipt must be for (mcp.<server>.<tool>)

Exit status: 0 verified, 1 not verified (the reason on stderr), 2 usage error.
`;

const KEY = { flag: '--vkey', role: 'log' } as const;

export async function runReceiptVerify(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    vkey: { type: 'string' },
    arguments: { type: 'string' },
    capability: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(RECEIPT_VERIFY_HELP);
    return 0;
  }
  requireFlags(values, ['vkey']);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const key = await verifierKeyArg(values.vkey, KEY).catch((err: unknown) => {
    if (err instanceof NoteError) throw new UsageError(`--vkey: ${err.message}`);
    throw err;
  });
  const expected: ReceiptExpectations = {};
  if (values.arguments !== undefined) expected.arguments = await argumentsFile(values.arguments);
  if (values.capability !== undefined) expected.capability = values.capability;
  const file = positionals[0];
  const read = file === undefined ? await streamText(process.stdin) : await readFile(file, 'utf8');
  // A receipt saved by a shell or an editor may end in extra newlines, which no signature covers.
  const receipt = read.replace(/\n*$/, '\n');
  try {
    const checked = checkReceipt(receipt, key, expected);
    const matched = expected.arguments ? '; the arguments match' : '';
    process.stdout.write(
      `verified: receipt of decision ${checked.decision} (audit ${checked.audit}) for ${checked.actor}, ` +
        `${checked.capability}, issued ${checked.issued}, signed by ${checked.signer}${matched}\n`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof ReceiptError)) throw err;
    process.stderr.write(`NOT VERIFIED: ${err.message}\n`);
    return 1;
  }
}

/** The call's arguments: a JSON object. */
async function argumentsFile(path: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error(`${path} is not JSON: ${err.message}`);
    throw err;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`--arguments: ${path} does not hold a JSON object`);
  return value as Record<string, unknown>;
}
