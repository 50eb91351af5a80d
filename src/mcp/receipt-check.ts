import { keyFor } from '../audit/note/key-role.js';
import { NoteError } from '../audit/note/note-error.js';
import type { NoteVerifierKey } from '../audit/note/note-keys.js';
import { openNote, splitNote } from '../audit/note/signed-note.js';
import { argumentsDigest, RECEIPT_FIELDS, RECEIPT_VERSION, type ReceiptField } from './receipt.js';
import { ReceiptError } from './receipt-error.js';

/** What a receipt that holds says, and who signed it. */
export type Receipt = Record<ReceiptField, string> & { signer: string };

/** What the call in hand must match: the arguments it carries, the capability it is. */
export interface ReceiptExpectations {
  arguments?: Record<string, unknown>;
  capability?: string;
}

/** Receipts are a few hundred bytes: anything much larger is not one. */
const MAX_RECEIPT_BYTES = 8192;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Checks a receipt (`params._meta["dev.arbiter/receipt"]` of a call) with the verifier key
 * alone: one signature, by that key, over the seven lines of arbiter-receipt/v1, for these
 * arguments and this capability when given. Answers what it says; throws a ReceiptError
 * with the reason otherwise. examples/mcp/receipt-check.mjs is the same check, standalone.
 */
export function checkReceipt(
  receipt: unknown,
  key: NoteVerifierKey,
  expected: ReceiptExpectations = {},
): Receipt {
  if (receipt === undefined || receipt === null)
    throw new ReceiptError('receipt_missing', 'the call carries no receipt');
  if (typeof receipt !== 'string') throw new ReceiptError('receipt_malformed', 'the receipt is not text');
  if (Buffer.byteLength(receipt, 'utf8') > MAX_RECEIPT_BYTES)
    throw new ReceiptError('receipt_malformed', 'the receipt is larger than 8 KiB');
  const text = openReceipt(receipt, keyFor('log', key));
  const facts = readFields(text);
  if (expected.capability !== undefined && facts.capability !== expected.capability) {
    throw new ReceiptError(
      'capability_mismatch',
      `the receipt is for ${facts.capability}, not ${expected.capability}`,
    );
  }
  if (expected.arguments !== undefined && facts.arguments !== argumentsDigest(expected.arguments))
    throw new ReceiptError('arguments_mismatch', 'the receipt is for other arguments');
  return { ...facts, signer: key.name };
}

/** The receipt's text, once its one signature is found to be the key's. */
function openReceipt(receipt: string, key: NoteVerifierKey): string {
  try {
    if (splitNote(receipt).signatures.length !== 1)
      throw new ReceiptError('receipt_malformed', 'a receipt carries exactly one signature');
    return openNote(receipt, [key]).text;
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
    if (err.code === 'note_unverified')
      throw new ReceiptError(
        'receipt_unverified',
        `the receipt is not signed by ${key.name}: ${err.message}`,
      );
    throw new ReceiptError('receipt_malformed', `the receipt is not a signed note: ${err.message}`);
  }
}

function readFields(text: string): Record<ReceiptField, string> {
  const [version, ...lines] = text.slice(0, -1).split('\n');
  if (version !== RECEIPT_VERSION)
    throw new ReceiptError('receipt_malformed', `the receipt's text does not start with ${RECEIPT_VERSION}`);
  if (lines.length !== RECEIPT_FIELDS.length)
    throw new ReceiptError('receipt_malformed', `the receipt has ${lines.length + 1} lines, not 7`);
  const facts = {} as Record<ReceiptField, string>;
  RECEIPT_FIELDS.forEach((field, i) => {
    const line = lines[i]!;
    if (!line.startsWith(`${field} `) || line.length === field.length + 1)
      throw new ReceiptError('receipt_malformed', `line ${i + 2} of the receipt is not "${field} <value>"`);
    facts[field] = line.slice(field.length + 1);
  });
  if (!DIGEST.test(facts.arguments))
    throw new ReceiptError('receipt_malformed', "the receipt's arguments are not a sha256: digest");
  if (!RFC3339.test(facts.issued) || Number.isNaN(Date.parse(facts.issued)))
    throw new ReceiptError('receipt_malformed', "the receipt's issued time is not an RFC 3339 time");
  return facts;
}
