import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as example from '../../examples/mcp/receipt-check.mjs';
import {
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
  SIGNATURE_TYPE,
  type NoteSigningKey,
} from '../../src/audit/note/note-keys.js';
import { signNote } from '../../src/audit/note/signed-note.js';
import { checkReceipt } from '../../src/mcp/receipt-check.js';
import { signReceipt } from '../../src/mcp/receipt.js';
import { capabilityForTool } from '../../src/mcp/tool-capability.js';

// The two checkers of a receipt: Arbiter's own (arbiter receipt verify, on audit/note), and
// the standalone one an MCP server copies (examples/mcp/receipt-check.mjs). Both read the
// same receipts, and must give the same verdict on each.

const key = generateSigningKey('arbiter.test/receipts');
const other = generateSigningKey('arbiter.test/other');
const sameName = generateSigningKey('arbiter.test/receipts');
const vkey = formatVerifierKey(key);
const ARGS = { title: 'groceries', text: 'milk' };
const FACTS = {
  decision: '6f1c3d2e-8a7b-4c5d-9e0f-112233445566',
  audit: 'a1b2c3d4-0000-4000-8000-000000000001',
  actor: 'agent-001',
  capability: 'mcp.notes.add_note',
  arguments: ARGS,
  issued: new Date('2026-11-29T08:41:38.123Z'),
};
const receipt = signReceipt(FACTS, key);
const text = receipt.slice(0, receipt.lastIndexOf('\n\n') + 1);
const signature = receipt.slice(text.length + 1);
const lines = text.slice(0, -1).split('\n');
const withLines = (changed: string[], by: NoteSigningKey[] = [key]) =>
  signNote(`${changed.join('\n')}\n`, by);
const replaced = (index: number, line: string) => lines.map((l, i) => (i === index ? line : l));

/** 'ok', or the code of a refusal. */
type Outcome = string;

/** Each checker's verdict: 'ok' or the code of its refusal. */
function verdicts(value: unknown, args: Record<string, unknown> = ARGS, tool = 'add_note') {
  const ours = outcome(() =>
    checkReceipt(value, parseVerifierKey(vkey), {
      arguments: args,
      capability: capabilityForTool('notes', tool)!,
    }),
  );
  const theirs = outcome(() =>
    example.checkReceipt(value, example.parseVerifierKey(vkey), { arguments: args, tool }),
  );
  return { ours, theirs };
}

function outcome(check: () => unknown): Outcome {
  try {
    check();
    return 'ok';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string') throw err;
    return code;
  }
}

const VECTORS: [string, unknown, Outcome, Record<string, unknown>?, string?][] = [
  ['a receipt of this call', receipt, 'ok'],
  ['no receipt', undefined, 'receipt_missing'],
  ['a null receipt', null, 'receipt_missing'],
  ['a receipt that is not text', { receipt }, 'receipt_malformed'],
  ['a receipt cut short', receipt.slice(0, -10), 'receipt_malformed'],
  ['a receipt without its signature', `${text}\n`, 'receipt_malformed'],
  ['a receipt without its blank line', text + signature, 'receipt_malformed'],
  [
    'a text cut short under the signature',
    `${lines.slice(0, 4).join('\n')}\n\n${signature}`,
    'receipt_unverified',
  ],
  ['a line added under the signature', `${text}extra line\n\n${signature}`, 'receipt_unverified'],
  ['a line added after the signature', `${receipt}\u2014 someone AAAA\n`, 'receipt_malformed'],
  ['a blank line at the end', `${receipt}\n`, 'receipt_malformed'],
  [
    'another actor under the signature',
    receipt.replace('actor agent-001', 'actor agent-002'),
    'receipt_unverified',
  ],
  ['a receipt signed by another key', signReceipt(FACTS, other), 'receipt_unverified'],
  ['a receipt signed by another key of the same name', signReceipt(FACTS, sameName), 'receipt_unverified'],
  [
    'a signature line naming another key',
    receipt.replace('\u2014 arbiter.test/receipts ', '\u2014 arbiter.test/x '),
    'receipt_unverified',
  ],
  ['two signatures, the second by another key', withLines(lines, [key, other]), 'receipt_malformed'],
  ['two signatures by the key', withLines(lines, [key, key]), 'receipt_malformed'],
  ['a signature that is not base64', `${text}\n\u2014 arbiter.test/receipts !!!!\n`, 'receipt_malformed'],
  ['a control character', receipt.replace('agent-001', 'agent\u0007001'), 'receipt_malformed'],
  ['more than 8 KiB', `${'x'.repeat(9000)}\n\n${signature}`, 'receipt_malformed'],
  ['other arguments', receipt, 'arguments_mismatch', { title: 'groceries', text: 'wine' }],
  ['arguments with one more member', receipt, 'arguments_mismatch', { ...ARGS, extra: true }],
  ['another tool', receipt, 'capability_mismatch', ARGS, 'delete_note'],
  // Signed by the key, but not a receipt of this version: refused as malformed.
  ['another version line', withLines(replaced(0, 'arbiter-receipt/v2')), 'receipt_malformed'],
  ['a line more', withLines([...lines, 'extra line']), 'receipt_malformed'],
  ['a line fewer', withLines(lines.slice(0, -1)), 'receipt_malformed'],
  [
    'lines out of order',
    withLines([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)]),
    'receipt_malformed',
  ],
  ['an empty actor', withLines(replaced(3, 'actor ')), 'receipt_malformed'],
  ['a digest that is not SHA-256', withLines(replaced(5, 'arguments md5:00')), 'receipt_malformed'],
  ['an issue time that is not RFC 3339', withLines(replaced(6, 'issued yesterday')), 'receipt_malformed'],
];

describe('the receipt checkers (arbiter receipt verify, examples/mcp/receipt-check.mjs)', () => {
  it.each(VECTORS)('%s: %s', (_, value, expected, args, tool) => {
    expect(verdicts(value, args, tool)).toEqual({ ours: expected, theirs: expected });
  });

  it('agree on any receipt changed in one place', () => {
    fc.assert(
      fc.property(
        fc.nat(receipt.length - 1),
        fc.oneof(fc.constant(''), fc.string({ minLength: 1, maxLength: 2 })),
        (at, insert) => {
          const changed = receipt.slice(0, at) + insert + receipt.slice(at + 1);
          const { ours, theirs } = verdicts(changed);
          expect(theirs).toBe(ours);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('agree on the arguments: the same digest for any JSON arguments, member order aside', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (raw) => {
        const args = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
        const signed = signReceipt({ ...FACTS, arguments: args }, key);
        const reordered = Object.fromEntries(Object.entries(args).reverse());
        expect(verdicts(signed, reordered)).toEqual({ ours: 'ok', theirs: 'ok' });
      }),
    );
  });

  it('read the tool of a capability the same way the proxy names it', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/), (tool) => {
        const capability = capabilityForTool('notes', tool)!;
        const signed = signReceipt({ ...FACTS, capability }, key);
        expect(verdicts(signed, ARGS, tool)).toEqual({ ours: 'ok', theirs: 'ok' });
      }),
    );
  });

  it('answer what the receipt says when it holds', () => {
    const expected = {
      decision: FACTS.decision,
      audit: FACTS.audit,
      actor: 'agent-001',
      capability: 'mcp.notes.add_note',
      arguments: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      issued: '2026-11-29T08:41:38.123Z',
      signer: 'arbiter.test/receipts',
    };
    expect(checkReceipt(receipt, parseVerifierKey(vkey))).toEqual(expected);
    expect(example.checkReceipt(receipt, example.parseVerifierKey(vkey), { arguments: ARGS })).toEqual(
      expected,
    );
  });

  it('read verifier keys alike, and the example refuses a key that is not an Ed25519 signer', () => {
    const parsed = example.parseVerifierKey(vkey);
    expect({ name: parsed.name, keyId: parsed.keyId }).toEqual({ name: key.name, keyId: key.keyId });
    const witness = formatVerifierKey(generateSigningKey('w.test', SIGNATURE_TYPE.cosignatureV1));
    expect(() => example.parseVerifierKey(witness)).toThrow(/type/);
    const [name, id, ...material] = vkey.split('+');
    const flipped = ((Number.parseInt(id!, 16) ^ 1) >>> 0).toString(16).padStart(8, '0');
    const wrongId = `${name}+${flipped}+${material.join('+')}`;
    expect(() => example.parseVerifierKey(wrongId)).toThrow(/key ID/);
    expect(() => example.parseVerifierKey('not a key')).toThrow(/verifier key/);
  });
});
