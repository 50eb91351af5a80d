import { describe, expect, it } from 'vitest';
import { formatTlogProof, parseTlogProof } from './tlog-proof.js';

// The example of C2SP tlog-proof (its signatures are elided there, so only the shape is used).
const EXAMPLE = `c2sp.org/tlog-proof@v1
extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ
index 73894
gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=
RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=
AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=

example.com/fancylog
109482
sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=

\u2014 example.com/fancylog hI2DJw==
`;

describe('C2SP tlog-proof', () => {
  it('reads the specification example: extra data, index, five hashes, the checkpoint verbatim', () => {
    const proof = parseTlogProof(EXAMPLE);
    expect(proof.index).toBe(73894);
    expect(proof.hashes.map((h) => h.toString('base64'))).toEqual([
      'gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=',
      'B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=',
      'EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=',
      'RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=',
      'AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=',
    ]);
    expect(proof.checkpoint.startsWith('example.com/fancylog\n109482\n')).toBe(true);
    expect(proof.extra?.toString('base64')).toBe('YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ');
    expect(formatTlogProof(proof)).toBe(EXAMPLE);
  });

  it('writes a proof without extra data or hashes (a tree of one) and reads it back', () => {
    const proof = {
      index: 0,
      hashes: [],
      checkpoint: 'log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 log AAAA\n',
    };
    const text = formatTlogProof(proof);
    expect(text.startsWith('c2sp.org/tlog-proof@v1\nindex 0\n\nlog\n1\n')).toBe(true);
    expect(parseTlogProof(text)).toEqual(proof);
  });

  const HASH1 = 'gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=';
  const notIndex = (line: string) => `"${line}" is not an index line`;
  const withIndex = (line: string) => EXAMPLE.replace('index 73894', line);
  it.each([
    [
      'another header',
      EXAMPLE.replace('tlog-proof@v1', 'tlog-proof@v2'),
      'the first line must be c2sp.org/tlog-proof@v1',
    ],
    ['an empty line first', `\n\n${EXAMPLE}`, 'the first line must be c2sp.org/tlog-proof@v1'],
    ['no empty line', EXAMPLE.replaceAll('\n\n', '\n'), 'no empty line before the checkpoint'],
    ['an index with a leading zero', withIndex('index 073894'), notIndex('index 073894')],
    ['a negative index', withIndex('index -1'), notIndex('index -1')],
    ['an index beyond 2^53', withIndex('index 9007199254740993'), notIndex('index 9007199254740993')],
    ['junk before the index line', withIndex('xindex 73894'), notIndex('xindex 73894')],
    ['no index line', EXAMPLE.replace('index 73894\n', ''), notIndex(HASH1)],
    ['only the header', `c2sp.org/tlog-proof@v1\n\n${EXAMPLE.split('\n\n')[1]}`, notIndex('')],
    [
      'a first hash of 31 bytes',
      EXAMPLE.replace(HASH1, Buffer.alloc(31).toString('base64')),
      'proof hash 1 is not 32 bytes',
    ],
    [
      'a second hash in base64url',
      EXAMPLE.replace('B95lDa8R83lS8n0eG+o0', 'B95lDa8R83lS8n0eG-o0'),
      'proof hash 2 is not canonical base64',
    ],
    [
      'extra that is not base64',
      EXAMPLE.replace('extra YWdl', 'extra *Wdl'),
      'extra is not canonical base64',
    ],
    ['an empty extra', EXAMPLE.replace(/extra .*\n/, 'extra \n'), 'extra is not canonical base64'],
    [
      'nothing after the empty line',
      `c2sp.org/tlog-proof@v1\nindex 1\n\n`,
      'no checkpoint after the empty line',
    ],
  ])('refuses a proof with %s', (_what, text, message) => {
    expect(() => parseTlogProof(text)).toThrow(
      expect.objectContaining({ code: 'note_malformed', message: `tlog-proof: ${message}` }),
    );
  });
});
