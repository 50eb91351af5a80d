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
    expect(openNote(note, [parseVerifierKey(PETER_VKEY)])).toStrictEqual({
      text: GO_TEXT,
      verified: [{ name: 'PeterNeumann', keyId: 0xc74f20a3, line: PETER_SIG }],
      unknown: [{ name: 'EnochRoot', keyId: 0xaf0cfe78, line: ENOCH_SIG }],
    });
  });

  it('signs with several keys in their order, one line each', () => {
    const peter = parseSigningKey(PETER_SKEY);
    const other = generateSigningKey('other.example/log');
    expect(signNote(GO_TEXT, [peter, other])).toBe(
      `${GO_TEXT}\n${PETER_SIG}${signatureLine(GO_TEXT, other)}`,
    );
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

  it('ignores a signature by the known key ID under another name', () => {
    const renamed = SPEC_NOTE.replace('\u2014 example.com/foo ', '\u2014 example.com/bar ');
    expect(() => openNote(renamed, [parseVerifierKey(SPEC_VKEY)])).toThrow(
      expect.objectContaining({
        code: 'note_unverified',
        message: 'no signature on the note is by a trusted key',
      }),
    );
  });

  it('counts a key once however many of its lines a note repeats, up to 100 signatures', () => {
    const line = SPEC_NOTE.split('\n\n')[1]!;
    const opened = openNote(`${SPEC_NOTE}${line.repeat(99)}`, [parseVerifierKey(SPEC_VKEY)]);
    expect(opened.verified).toStrictEqual([{ name: 'example.com/foo', keyId: 0x530d903a, line }]);
    expect(opened.unknown).toEqual([]);
  });

  it('keeps a signature of exactly five bytes by an unknown key', () => {
    const line = '\u2014 other.example AAAAAAA=\n';
    const opened = openNote(`${SPEC_NOTE}${line}`, [parseVerifierKey(SPEC_VKEY)]);
    expect(opened.unknown).toStrictEqual([{ name: 'other.example', keyId: 0, line }]);
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

  const SIG = SPEC_NOTE.split(' ').at(-1)!.trim();
  const withSignature = (encoded: string) => SPEC_NOTE.replace(SIG, encoded);
  const notBase64 = 'signature of example.com/foo is not base64';
  const invalidName = 'signature line has an invalid key name';
  const MiB = 1 << 20;
  it.each([
    [
      'no blank line',
      'This is an example message.\n\u2014 example.com/foo AAAA\n',
      'note has no blank line before its signatures',
    ],
    ['no final newline', SPEC_NOTE.slice(0, -1), 'note must end with a newline'],
    ['an empty signature block', 'This is an example message.\n\n', 'note must end with a newline'],
    [
      'a control character',
      SPEC_NOTE.replace('example message', 'example\u0007message'),
      'note holds a control character',
    ],
    ['a carriage return', SPEC_NOTE.replace('.\n\n', '.\r\n\n'), 'note holds a control character'],
    ['a tab in a signature line', SPEC_NOTE.replace('foo ', 'foo\t'), 'note holds a control character'],
    ['a lone high surrogate', SPEC_NOTE.replace('This', '\ud800This'), 'note is not valid UTF-8'],
    ['a lone low surrogate', SPEC_NOTE.replace('This', 'T\udc00his'), 'note is not valid UTF-8'],
    [
      'a line without the em dash',
      SPEC_NOTE.replace('\u2014 ', '-- '),
      'a signature line must start with "— "',
    ],
    ['a key name with a plus', SPEC_NOTE.replace('example.com/foo', 'example.com+foo'), invalidName],
    ['an empty key name', SPEC_NOTE.replace('example.com/foo ', ' '), invalidName],
    ['no space in a signature line', SPEC_NOTE.replace('example.com/foo ', ''), invalidName],
    ['a signature that is not base64', withSignature(`!${SIG.slice(1)}`), notBase64],
    ['junk before the signature', withSignature(`!!!!${SIG}`), notBase64],
    ['junk after the signature', withSignature(`${SIG}!!!!`), notBase64],
    ['a signature without its padding', withSignature(SIG.replace(/=+$/, '')), notBase64],
    ['a signature of four bytes', withSignature('AAAAAA=='), 'signature of example.com/foo is too short'],
    [
      '101 signatures',
      `${SPEC_NOTE}${`\u2014 example.com/foo ${SIG}\n`.repeat(100)}`,
      'note has more than 100 signatures',
    ],
    ['more than 1 MiB', `${'x'.repeat(MiB)}\n${SPEC_NOTE}`, 'note is larger than 1 MiB'],
  ])('refuses a note with %s', (_what, note, message) => {
    expect(() => openNote(note, [parseVerifierKey(SPEC_VKEY)])).toThrow(
      expect.objectContaining({ code: 'note_malformed', message }),
    );
  });

  it('opens a note of exactly 1 MiB and refuses one a byte longer', () => {
    const key = parseSigningKey(PETER_SKEY);
    const lineBytes = Buffer.byteLength(signatureLine('x\n', key));
    const text = `${'x'.repeat(MiB - lineBytes - 2)}\n`;
    const note = signNote(text, [key]);
    expect(Buffer.byteLength(note)).toBe(MiB);
    expect(openNote(note, [parseVerifierKey(PETER_VKEY)]).text).toBe(text);
    expect(() => openNote(`x${note}`, [parseVerifierKey(PETER_VKEY)])).toThrow('note is larger than 1 MiB');
  });

  it('refuses a wrong signature with a different length, and an empty list of trusted keys', () => {
    const truncated = withSignature(Buffer.from(SIG, 'base64').subarray(0, 40).toString('base64'));
    expect(() => openNote(truncated, [parseVerifierKey(SPEC_VKEY)])).toThrow(
      expect.objectContaining({
        code: 'note_unverified',
        message: 'signature of example.com/foo does not verify',
      }),
    );
    expect(() => openNote(SPEC_NOTE, [])).toThrow('no signature on the note is by a trusted key');
  });
});

describe('note texts', () => {
  it.each([
    ['one empty line', '\n'],
    ['characters beyond the BMP', 'caf\u00e9 \u{1F512} \u{1D11E}\n'],
  ])('signs and opens a text of %s', (_what, text) => {
    const key = parseSigningKey(PETER_SKEY);
    expect(openNote(signNote(text, [key]), [parseVerifierKey(PETER_VKEY)]).text).toBe(text);
  });

  const newline = 'note text must end with a newline';
  it.each([
    ['an empty text', '', newline],
    ['a text without a final newline', 'no newline', newline],
    ['a control character', 'bell\u0007\n', 'note text holds a control character'],
    ['a lone surrogate', '\udc00\n', 'note is not valid UTF-8'],
    ['a replacement character', '\ufffd\n', 'note is not valid UTF-8'],
  ])('refuses to sign %s', (_what, text, message) => {
    const key = parseSigningKey(PETER_SKEY);
    expect(() => signatureLine(text, key)).toThrow(
      expect.objectContaining({ code: 'note_malformed', message }),
    );
    expect(() => signNote(text, [key])).toThrow(message);
  });

  it('refuses to sign a note with no key', () => {
    expect(() => signNote(GO_TEXT, [])).toThrow(
      expect.objectContaining({ code: 'note_malformed', message: 'a note needs at least one signature' }),
    );
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

  it('writes a key ID below 0x10000000 with its leading zero', () => {
    const peter = parseSigningKey(PETER_SKEY);
    // A name whose key ID with Peter's key starts with a zero nibble.
    const name = 'zero.example/11';
    const key = { ...peter, name, keyId: keyIdOf(name, SIGNATURE_TYPE.ed25519, peter.publicKey) };
    expect(formatVerifierKey(key)).toBe(`${name}+09e9018b+${PETER_VKEY.split('+')[2]}`);
    expect(parseSigningKey(formatSigningKey(key)).keyId).toBe(0x09e9018b);
  });

  it('reads keys with whitespace around them, as read from a file or an environment variable', () => {
    expect(parseVerifierKey(` ${SPEC_VKEY}\n`).keyId).toBe(0x530d903a);
    expect(formatSigningKey(parseSigningKey(` ${PETER_SKEY}\n`))).toBe(PETER_SKEY);
  });

  // A verifier key whose base64 holds '+' has as many '+'-separated fields as a private key.
  const plusKey = `a.test/log+0123abcd+AQ${'+'.repeat(3)}${'A'.repeat(39)}=`;
  const idMismatch = (id: string) => `ID ${id} does not match its name and key`;
  const badId = (id: string) => `has an invalid key ID "${id}"`;
  it.each([
    ['of two fields', 'example.com/foo+530d903a', 'is not name+keyid+key'],
    ['with another key ID', SPEC_VKEY.replace('530d903a', '530d903b'), idMismatch('530d903b')],
    ['with another name for the key', SPEC_VKEY.replace('foo', 'bar'), idMismatch('530d903a')],
    ['with an uppercase key ID', SPEC_VKEY.replace('530d903a', '530D903A'), badId('530D903A')],
    ['with a zero before its key ID', SPEC_VKEY.replace('530d903a', '0530d903a'), badId('0530d903a')],
    ['with a zero after its key ID', SPEC_VKEY.replace('530d903a', '530d903a0'), badId('530d903a0')],
    ['of an unknown signature type', SPEC_VKEY.replace('+Ae', '+Au'), 'has unsupported signature type 2'],
    ['with a short key', SPEC_VKEY.slice(0, -4), 'is not 32 bytes'],
    ['that is not base64', SPEC_VKEY.replace('+Ae', '+A*'), 'is not base64'],
    ['with junk before its base64', SPEC_VKEY.replace('+Ae', '+!Ae'), 'is not base64'],
    ['with junk after its base64', `${SPEC_VKEY}!`, 'is not base64'],
    ['with an empty name', SPEC_VKEY.replace('example.com/foo', ''), 'has an invalid key name ""'],
    [
      'whose name has a space',
      SPEC_VKEY.replace('com/', 'com/ '),
      'has an invalid key name "example.com/ foo"',
    ],
  ])('refuses a verifier key %s', (_what, vkey, message) => {
    expect(() => parseVerifierKey(vkey)).toThrow(
      expect.objectContaining({ code: 'key_malformed', message: `verifier key ${message}` }),
    );
  });

  it.each([
    ['that is a vkey', PETER_VKEY, 'does not start with PRIVATE+KEY+'],
    ['that is a vkey of five fields', plusKey, 'does not start with PRIVATE+KEY+'],
    ['made of a vkey', `PRIVATE+KEY+${plusKey}`, idMismatch('0123abcd')],
    ['with another key ID', PETER_SKEY.replace('c74f20a3', 'c74f20a4'), idMismatch('c74f20a4')],
    ['of four fields', 'PRIVATE+KEY+PeterNeumann+c74f20a3', 'is not PRIVATE+KEY+name+keyid+key'],
    ['with an uppercase key ID', PETER_SKEY.replace('c74f20a3', 'C74F20A3'), badId('C74F20A3')],
    ['with an empty name', PETER_SKEY.replace('PeterNeumann', ''), 'has an invalid key name ""'],
    ['that is not base64', PETER_SKEY.replace('AYEK', 'AY*K'), 'is not base64'],
  ])('refuses a private key %s', (_what, skey, message) => {
    expect(() => parseSigningKey(skey)).toThrow(
      expect.objectContaining({ code: 'key_malformed', message: `private key ${message}` }),
    );
  });

  it.each(['', 'has space', 'has+plus', 'no\u00a0break', 'tab\there'])(
    'refuses to generate a key named %j',
    (name) => {
      expect(() => generateSigningKey(name)).toThrow(
        expect.objectContaining({
          code: 'key_malformed',
          message: `"${name}" is not a valid key name (no spaces or "+")`,
        }),
      );
    },
  );

  it('derives different key IDs for the same key as a signer and as a cosigner', () => {
    const key = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    expect(key.keyId).toBe(keyIdOf('witness.example/w1', SIGNATURE_TYPE.cosignatureV1, key.publicKey));
    expect(key.keyId).not.toBe(keyIdOf('witness.example/w1', SIGNATURE_TYPE.ed25519, key.publicKey));
    expect(formatVerifierKey(verifierOf(key))).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+B/);
  });
});
