import { describe, expect, it } from 'vitest';
import { formatCheckpoint, parseCheckpoint } from './checkpoint-note.js';
import {
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
  SIGNATURE_TYPE,
  signWith,
  verifierOf,
} from './note-keys.js';
import { openNote, signatureLine, signedMessage, signNote } from './signed-note.js';

// The example of C2SP tlog-checkpoint / tlog-cosignature.
const ROOT = 'CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=';
const SOFA = `example.com/behind-the-sofa\n20852163\n${ROOT}\n`;

describe('checkpoint notes', () => {
  it('parses the specification example and writes it back byte for byte', () => {
    const checkpoint = parseCheckpoint(SOFA);
    // No extension lines: no extensions member at all.
    expect(checkpoint).toStrictEqual({
      origin: 'example.com/behind-the-sofa',
      size: 20852163,
      root: Buffer.from(ROOT, 'base64'),
    });
    expect(formatCheckpoint(checkpoint)).toBe(SOFA);
  });

  it('keeps extension lines and tree sizes beyond 2^32', () => {
    const text = `${SOFA.replace('20852163', String(2 ** 40 + 1))}ext one\next two\n`;
    const checkpoint = parseCheckpoint(text);
    expect(checkpoint.size).toBe(2 ** 40 + 1);
    expect(checkpoint.extensions).toEqual(['ext one', 'ext two']);
    expect(formatCheckpoint(checkpoint)).toBe(text);
  });

  const notRoot = 'checkpoint root hash is not the base64 of 32 bytes';
  const notSize = (size: string) => `checkpoint size "${size}" is not a decimal tree size`;
  it.each([
    ['no final newline', SOFA.slice(0, -1), 'checkpoint must end with a newline'],
    [
      'two lines',
      'example.com/behind-the-sofa\n20852163\n',
      'checkpoint needs an origin, a size and a root hash',
    ],
    ['an empty origin', SOFA.replace('example.com/behind-the-sofa', ''), 'checkpoint origin is empty'],
    ['a size with a leading zero', SOFA.replace('20852163', '020852163'), notSize('020852163')],
    ['a negative size', SOFA.replace('20852163', '-1'), notSize('-1')],
    ['a size with a sign', SOFA.replace('20852163', '+20852163'), notSize('+20852163')],
    ['a size beyond 2^53', SOFA.replace('20852163', '9007199254740993'), notSize('9007199254740993')],
    ['a hex size', SOFA.replace('20852163', '0x10'), notSize('0x10')],
    ['a root of 31 bytes', SOFA.replace(ROOT, Buffer.alloc(31).toString('base64')), notRoot],
    ['a root that is not canonical base64', SOFA.replace('q2I=', 'q2J='), notRoot],
    ['a root in base64url', SOFA.replace('m/Xajj', 'm_Xajj'), notRoot],
    ['an empty extension line', `${SOFA}\n`, 'checkpoint has an empty extension line'],
  ])('refuses a checkpoint with %s', (_what, text, message) => {
    expect(() => parseCheckpoint(text)).toThrow(
      expect.objectContaining({ code: 'checkpoint_malformed', message }),
    );
  });
});

describe('cosignatures (C2SP tlog-cosignature, cosignature/v1)', () => {
  it('signs the timestamped checkpoint and is verified with the time it carries', () => {
    const log = generateSigningKey('example.com/behind-the-sofa');
    const witness = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    const note = `${signNote(SOFA, [log])}${signatureLine(SOFA, witness, 1679315147)}`;
    const opened = openNote(note, [verifierOf(log), verifierOf(witness)]);
    expect(opened.verified.map((s) => [s.name, s.timestamp])).toEqual([
      ['example.com/behind-the-sofa', undefined],
      ['witness.example/w1', 1679315147],
    ]);
    // The payload is key ID, then the time as 8 big-endian bytes, then the signature.
    const payload = Buffer.from(note.trim().split(' ').at(-1)!, 'base64');
    expect(payload).toHaveLength(4 + 8 + 64);
    expect(payload.readBigUInt64BE(4)).toBe(1679315147n);
  });

  it('refuses a cosignature whose time was changed, or made without a time', () => {
    const witness = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    const line = signatureLine(SOFA, witness, 1679315147);
    const payload = Buffer.from(line.trim().split(' ').at(-1)!, 'base64');
    payload.writeBigUInt64BE(1679315148n, 4);
    const changed = `\u2014 witness.example/w1 ${payload.toString('base64')}\n`;
    expect(() => openNote(`${SOFA}\n${changed}`, [verifierOf(witness)])).toThrow(/does not verify/);
  });

  it.each([
    ['no time', undefined],
    ['a negative time', -1],
    ['a fractional time', 1.5],
    ['a time beyond 2^53', Number.MAX_SAFE_INTEGER + 1],
  ])('refuses to cosign with %s', (_what, timestamp) => {
    const witness = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    expect(() => signatureLine(SOFA, witness, timestamp)).toThrow(
      expect.objectContaining({
        code: 'cosignature_invalid',
        message: 'a cosignature needs a POSIX timestamp',
      }),
    );
  });

  it.each([0, Number.MAX_SAFE_INTEGER])('cosigns at time %d and reads that time back', (timestamp) => {
    const witness = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    // The cosigner's key as the witness shares it: a vkey of signature type 0x04.
    const vkey = parseVerifierKey(formatVerifierKey(verifierOf(witness)));
    expect(vkey.type).toBe(SIGNATURE_TYPE.cosignatureV1);
    const opened = openNote(`${SOFA}\n${signatureLine(SOFA, witness, timestamp)}`, [vkey]);
    expect(opened.verified.map((s) => s.timestamp)).toEqual([timestamp]);
  });

  it('refuses a well-signed cosignature whose time is beyond 2^53', () => {
    const witness = generateSigningKey('witness.example/w1', SIGNATURE_TYPE.cosignatureV1);
    const time = 2n ** 53n;
    const payload = Buffer.alloc(12);
    payload.writeUInt32BE(witness.keyId);
    payload.writeBigUInt64BE(time, 4);
    const signature = signWith(witness, signedMessage(witness.type, SOFA, Number(time)));
    const line = `\u2014 witness.example/w1 ${Buffer.concat([payload, signature]).toString('base64')}\n`;
    expect(() => openNote(`${SOFA}\n${line}`, [verifierOf(witness)])).toThrow(
      expect.objectContaining({
        code: 'note_unverified',
        message: 'cosignature of witness.example/w1 has an impossible time',
      }),
    );
  });

  it('does not take a plain signature as a cosignature of the same key, nor the reverse', () => {
    const plain = generateSigningKey('witness.example/w1');
    const asCosigner = {
      ...verifierOf(plain),
      type: SIGNATURE_TYPE.cosignatureV1,
      keyId: plain.keyId,
    } as const;
    expect(() => openNote(signNote(SOFA, [plain]), [asCosigner])).toThrow(/wrong length|does not verify/);
  });
});
