import { describe, expect, it } from 'vitest';
import { formatCheckpoint, parseCheckpoint } from './checkpoint-note.js';
import { generateSigningKey, SIGNATURE_TYPE, verifierOf } from './note-keys.js';
import { openNote, signatureLine, signNote } from './signed-note.js';

// The example of C2SP tlog-checkpoint / tlog-cosignature.
const SOFA = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';

describe('checkpoint notes', () => {
  it('parses the specification example and writes it back byte for byte', () => {
    const checkpoint = parseCheckpoint(SOFA);
    expect(checkpoint.origin).toBe('example.com/behind-the-sofa');
    expect(checkpoint.size).toBe(20852163);
    expect(checkpoint.root.toString('base64')).toBe('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=');
    expect(formatCheckpoint(checkpoint)).toBe(SOFA);
  });

  it('keeps extension lines and tree sizes beyond 2^32', () => {
    const text = `${SOFA.replace('20852163', String(2 ** 40 + 1))}ext one\next two\n`;
    const checkpoint = parseCheckpoint(text);
    expect(checkpoint.size).toBe(2 ** 40 + 1);
    expect(checkpoint.extensions).toEqual(['ext one', 'ext two']);
    expect(formatCheckpoint(checkpoint)).toBe(text);
  });

  it.each([
    ['no final newline', SOFA.slice(0, -1)],
    ['two lines', 'example.com/behind-the-sofa\n20852163\n'],
    ['an empty origin', SOFA.replace('example.com/behind-the-sofa', '')],
    ['a size with a leading zero', SOFA.replace('20852163', '020852163')],
    ['a negative size', SOFA.replace('20852163', '-1')],
    ['a size with a sign', SOFA.replace('20852163', '+20852163')],
    ['a size beyond 2^53', SOFA.replace('20852163', '9007199254740993')],
    ['a hex size', SOFA.replace('20852163', '0x10')],
    [
      'a root of 31 bytes',
      SOFA.replace('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=', Buffer.alloc(31).toString('base64')),
    ],
    ['a root that is not canonical base64', SOFA.replace('q2I=', 'q2J=')],
    ['a root in base64url', SOFA.replace('m/Xajj', 'm_Xajj')],
    ['an empty extension line', `${SOFA}\n`],
  ])('refuses a checkpoint with %s', (_what, text) => {
    expect(() => parseCheckpoint(text)).toThrow(expect.objectContaining({ code: 'checkpoint_malformed' }));
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
    expect(() => signatureLine(SOFA, witness)).toThrow(/timestamp/);
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
