import { createHash, createPublicKey, verify } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatVerifierKey, generateSigningKey } from '../audit/note/note-keys.js';
import { argumentsDigest, RECEIPT_META, signReceipt } from './receipt.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

const key = generateSigningKey('arbiter.test/receipts');
const FACTS = {
  decision: '6f1c3d2e-8a7b-4c5d-9e0f-112233445566',
  audit: 'a1b2c3d4-0000-4000-8000-000000000001',
  actor: 'agent-001',
  capability: 'mcp.notes.add_note',
  arguments: { title: 'groceries', text: 'milk', tags: ['a', 'b'], n: 1.5 },
  issued: new Date('2026-11-29T08:41:38.123Z'),
};

/** SHA-256 of the arguments' RFC 8785 JSON, by the independent canonicalize package. */
const referenceDigest = (args: unknown) =>
  `sha256:${createHash('sha256').update(canonicalize(args)!, 'utf8').digest('hex')}`;

/** The note split by hand (C2SP signed-note), its one signature checked with node:crypto. */
function referenceOpen(note: string): { text: string; name: string; keyId: number; valid: boolean } {
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const [line, ...rest] = note.slice(split + 2).split('\n');
  expect(rest).toEqual(['']);
  expect(line!.startsWith('\u2014 ')).toBe(true);
  const [name, encoded] = line!.slice(2).split(' ');
  const payload = Buffer.from(encoded!, 'base64');
  expect(payload).toHaveLength(4 + 64);
  const publicKey = createPublicKey(key.privateKey);
  const valid = verify(null, Buffer.from(text, 'utf8'), publicKey, payload.subarray(4));
  return { text, name: name!, keyId: payload.readUInt32BE(0), valid };
}

describe('signReceipt', () => {
  it('writes the seven lines of arbiter-receipt/v1 and signs them with the key, as C2SP notes are signed', () => {
    const note = signReceipt(FACTS, key);
    const opened = referenceOpen(note);
    expect(opened.text).toBe(
      [
        'arbiter-receipt/v1',
        `decision ${FACTS.decision}`,
        `audit ${FACTS.audit}`,
        'actor agent-001',
        'capability mcp.notes.add_note',
        `arguments ${referenceDigest(FACTS.arguments)}`,
        'issued 2026-11-29T08:41:38.123Z',
        '',
      ].join('\n'),
    );
    expect(opened.name).toBe('arbiter.test/receipts');
    expect(opened.keyId).toBe(key.keyId);
    expect(opened.valid).toBe(true);
    // The verifier key's id is the one in the signature line.
    expect(formatVerifierKey(key).split('+')[1]).toBe(key.keyId.toString(16).padStart(8, '0'));
  });

  it('hashes the RFC 8785 JSON of any arguments as the canonicalize package writes it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (args) => {
        const normalised = JSON.parse(JSON.stringify(args)) as Record<string, unknown>;
        expect(argumentsDigest(normalised)).toBe(referenceDigest(normalised));
      }),
    );
    // Member order does not matter; values do.
    expect(argumentsDigest({ b: 1, a: 2 })).toBe(argumentsDigest({ a: 2, b: 1 }));
    expect(argumentsDigest({ a: 2 })).not.toBe(argumentsDigest({ a: '2' }));
  });

  it.each([
    ['an actor id with a line break', { actor: 'agent\nissued 2000-01-01T00:00:00Z' }],
    ['an empty actor id', { actor: '' }],
    ['a decision id with a control character', { decision: 'a\u0007b' }],
  ])('refuses to sign %s: the text would not say what it means', (_, change) => {
    expect(() => signReceipt({ ...FACTS, ...change }, key)).toThrow(
      expect.objectContaining({ code: 'receipt_malformed' }),
    );
  });

  it('names the _meta key it travels under', () => {
    expect(RECEIPT_META).toBe('dev.arbiter/receipt');
  });
});
