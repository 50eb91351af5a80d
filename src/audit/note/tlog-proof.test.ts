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

  it.each([
    ['another header', EXAMPLE.replace('tlog-proof@v1', 'tlog-proof@v2')],
    ['no empty line', EXAMPLE.replace('\n\nexample.com', '\nexample.com')],
    ['an index with a leading zero', EXAMPLE.replace('index 73894', 'index 073894')],
    ['a negative index', EXAMPLE.replace('index 73894', 'index -1')],
    ['an index beyond 2^53', EXAMPLE.replace('index 73894', 'index 9007199254740993')],
    ['no index line', EXAMPLE.replace('index 73894\n', '')],
    [
      'a hash of 31 bytes',
      EXAMPLE.replace('gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=', Buffer.alloc(31).toString('base64')),
    ],
    ['a hash in base64url', EXAMPLE.replace('B95lDa8R83lS8n0eG+o0', 'B95lDa8R83lS8n0eG-o0')],
    ['extra that is not base64', EXAMPLE.replace('extra YWdl', 'extra *Wdl')],
    ['nothing after the empty line', `c2sp.org/tlog-proof@v1\nindex 1\n\n`],
  ])('refuses a proof with %s', (_what, text) => {
    expect(() => parseTlogProof(text)).toThrow(expect.objectContaining({ code: 'note_malformed' }));
  });
});
