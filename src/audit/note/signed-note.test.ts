import { describe, expect, it } from 'vitest';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  keyIdOf,
  parseSigningKey,
  parseVerifierKey,
  SIGNATURE_TYPE,
  verifierOf,
} from './note-keys.js';
import { openNote, signatureLine, signNote } from './signed-note.js';

// Public vectors: the example of the C2SP signed-note specification, and the keys and
// signatures of Go's golang.org/x/mod/sumdb/note documentation and tests.
const SPEC_VKEY = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const SPEC_NOTE =
  'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const GO_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG =
  '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const ENOCH_SIG =
  '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

describe('signed notes against the public vectors', () => {
  it('opens the specification example with its verifier key', () => {
    const key = parseVerifierKey(SPEC_VKEY);
    expect(key.name).toBe('example.com/foo');
    expect(key.keyId).toBe(0x530d903a);
    expect(formatVerifierKey(key)).toBe(SPEC_VKEY);
    const opened = openNote(SPEC_NOTE, [key]);
    expect(opened.text).toBe('This is an example message.\n');
    expect(opened.verified.map((s) => s.name)).toEqual(['example.com/foo']);
  });

  it('signs Go’s example text byte for byte as sumdb/note does, from its private key', () => {
    const key = parseSigningKey(PETER_SKEY);
    expect(formatVerifierKey(key)).toBe(PETER_VKEY);
    expect(formatSigningKey(key)).toBe(PETER_SKEY);
    expect(signatureLine(GO_TEXT, key)).toBe(PETER_SIG);
    expect(signNote(GO_TEXT, [key])).toBe(`${GO_TEXT}\n${PETER_SIG}`);
  });

  it('checks the signatures it knows and keeps the others as unknown', () => {
    const note = `${GO_TEXT}\n${PETER_SIG}${ENOCH_SIG}`;
    const both = openNote(note, [parseVerifierKey(PETER_VKEY), parseVerifierKey(ENOCH_VKEY)]);
    expect(both.verified.map((s) => s.name)).toEqual(['PeterNeumann', 'EnochRoot']);
    const peterOnly = openNote(note, [parseVerifierKey(PETER_VKEY)]);
    expect(peterOnly.verified.map((s) => s.name)).toEqual(['PeterNeumann']);
    expect(peterOnly.unknown.map((s) => s.name)).toEqual(['EnochRoot']);
  });
});

describe('signed notes against forgeries', () => {
  it('ignores a signature by another key with the same name, and so refuses a note signed only by it', () => {
    const impostor = generateSigningKey('example.com/foo');
    const forged = signNote('This is an example message.\n', [impostor]);
    expect(() => openNote(forged, [parseVerifierKey(SPEC_VKEY)])).toThrow(/no signature .* trusted key/);
    // Alongside the real signature the impostor's line is not trusted, only ignored.
    const mixed = `${SPEC_NOTE}${forged.split('\n\n')[1]}`;
    const opened = openNote(mixed, [parseVerifierKey(SPEC_VKEY)]);
    expect(opened.verified).toHaveLength(1);
    expect(opened.unknown).toHaveLength(1);
  });

  it('refuses the whole note when a line claiming a known name and key ID does not verify', () => {
    const impostor = generateSigningKey('example.com/foo');
    const line = signatureLine('This is an example message.\n', { ...impostor, keyId: 0x530d903a });
    expect(() => openNote(`${SPEC_NOTE}${line}`, [parseVerifierKey(SPEC_VKEY)])).toThrow(/does not verify/);
  });

  it('refuses a note with a forged extra line in its text', () => {
    const key = parseVerifierKey(SPEC_VKEY);
    const [text, signatures] = SPEC_NOTE.split('\n\n') as [string, string];
    for (const forged of [
      `${text}\nand a line more\n\n${signatures}`,
      `extra first line\n${text}\n\n${signatures}`,
      `${text}\n\nsecond paragraph\n\n${signatures}`,
      `${text.replace('example', 'exemplary')}\n\n${signatures}`,
    ]) {
      expect(() => openNote(forged, [key]), forged).toThrow(/does not verify/);
    }
  });

  it.each([
    ['no blank line', 'This is an example message.\n\u2014 example.com/foo AAAA\n', /blank line/],
    ['no final newline', SPEC_NOTE.slice(0, -1), /end with a newline/],
    [
      'a control character',
      SPEC_NOTE.replace('example message', 'example\u0007message'),
      /control character/,
    ],
    ['a carriage return', SPEC_NOTE.replace('.\n\n', '.\r\n\n'), /control character/],
    ['a line without the em dash', SPEC_NOTE.replace('\u2014 ', '-- '), /must start with/],
    ['a signature that is not base64', SPEC_NOTE.replace('Uw2Q', 'Uw2Q!'), /not base64/],
    ['a signature of four bytes', SPEC_NOTE.replace(/ [A-Za-z0-9+/=]+\n$/, ' AAAAAA==\n'), /too short/],
    ['a key name with a plus', SPEC_NOTE.replace('example.com/foo', 'example.com+foo'), /invalid key name/],
    [
      'an empty signature block',
      'This is an example message.\n\n',
      /must end with a newline|invalid key name|must start/,
    ],
    ['a lone surrogate', SPEC_NOTE.replace('This', '\ud800This'), /UTF-8/],
  ])('refuses a note with %s', (_what, note, error) => {
    expect(() => openNote(note, [parseVerifierKey(SPEC_VKEY)])).toThrow(error);
  });

  it('refuses a note with more than 100 signatures and one larger than 1 MiB', () => {
    const key = parseVerifierKey(SPEC_VKEY);
    const line = SPEC_NOTE.split('\n\n')[1]!;
    expect(() => openNote(`${SPEC_NOTE}${line.repeat(100)}`, [key])).toThrow(/more than 100/);
    expect(() => openNote(`${'x'.repeat(1 << 20)}\n${SPEC_NOTE}`, [key])).toThrow(/1 MiB/);
  });

  it('refuses a wrong signature with a different length, and an empty list of trusted keys', () => {
    const truncated = SPEC_NOTE.replace(
      / ([A-Za-z0-9+/=]+)\n$/,
      (_m, sig: string) => ` ${Buffer.from(sig, 'base64').subarray(0, 40).toString('base64')}\n`,
    );
    expect(() => openNote(truncated, [parseVerifierKey(SPEC_VKEY)])).toThrow(/does not verify/);
    expect(() => openNote(SPEC_NOTE, [])).toThrow(/trusted key/);
  });
});

describe('note keys', () => {
  it('generates keys whose vkey and private key files round-trip and sign verifiable notes', () => {
    const key = generateSigningKey('arbiter.example/audit');
    const reread = parseSigningKey(formatSigningKey(key));
    expect(reread.keyId).toBe(key.keyId);
    expect(reread.publicKey.equals(key.publicKey)).toBe(true);
    const note = signNote('hello\n', [reread]);
    expect(openNote(note, [parseVerifierKey(formatVerifierKey(key))]).text).toBe('hello\n');
  });

  it.each([
    ['three fields', 'example.com/foo+530d903a'],
    ['a key ID that does not match', 'example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
    ['another name for the key', 'example.com/bar+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
    ['an uppercase key ID', 'example.com/foo+530D903A+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
    ['an unknown signature type', 'example.com/foo+530d903a+AukyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
    ['a short key', 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U'],
    ['a key that is not base64', 'example.com/foo+530d903a+Aeky*Rrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
    ['an empty name', '+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'],
  ])('refuses a verifier key with %s', (_what, vkey) => {
    expect(() => parseVerifierKey(vkey)).toThrow(expect.objectContaining({ code: 'key_malformed' }));
  });

  it('refuses private keys that are not PRIVATE+KEY files or whose ID does not match', () => {
    expect(() => parseSigningKey(PETER_VKEY)).toThrow('private key does not start with PRIVATE+KEY+');
    // A verifier key whose base64 holds '+' has as many '+'-separated fields as a private key.
    const plusKey = `a.test/log+0123abcd+AQ${'+'.repeat(3)}${'A'.repeat(39)}=`;
    expect(() => parseSigningKey(plusKey)).toThrow('private key does not start with PRIVATE+KEY+');
    expect(() => parseSigningKey(`PRIVATE+KEY+${plusKey}`)).toThrow(
      expect.objectContaining({ code: 'key_malformed' }),
    );
    expect(() => parseSigningKey(PETER_SKEY.replace('c74f20a3', 'c74f20a4'))).toThrow(/does not match/);
    expect(() => generateSigningKey('has space')).toThrow(/valid key name/);
    expect(() => generateSigningKey('has+plus')).toThrow(/valid key name/);
  });

  it('derives different key IDs for the same key as a signer and as a cosigner', () => {
    const key = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    expect(key.keyId).toBe(keyIdOf('witness.example/w1', SIGNATURE_TYPE.cosignatureV1, key.publicKey));
    expect(key.keyId).not.toBe(keyIdOf('witness.example/w1', SIGNATURE_TYPE.ed25519, key.publicKey));
    expect(formatVerifierKey(verifierOf(key))).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+B/);
  });
});
