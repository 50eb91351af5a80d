import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseEventBlock, serverSentEvents } from './event-stream.js';

/** A body arriving in these chunks. */
async function eventsOfChunks(chunks: Uint8Array[]) {
  const events = [];
  for await (const event of serverSentEvents(Readable.from(chunks))) events.push(event);
  return events;
}

const eventsOf = (...texts: string[]) => eventsOfChunks(texts.map((text) => new TextEncoder().encode(text)));

describe('serverSentEvents', () => {
  it('yields events as Arbiter writes them, skipping its comments', async () => {
    expect(
      await eventsOf(
        ': connected\n\n',
        'id: 7\nevent: governance.decision\ndata: {"seq":7}\n\n',
        ': keep-alive\n\n',
      ),
    ).toEqual([{ id: '7', event: 'governance.decision', data: '{"seq":7}' }]);
  });

  it('joins an event split across chunks, even inside a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('event: x\ndata: café\n\n');
    const cut = bytes.indexOf(0xc3) + 1;
    expect(await eventsOfChunks([bytes.slice(0, cut), bytes.slice(cut)])).toEqual([
      { event: 'x', data: 'café' },
    ]);
  });

  it('keeps an unfinished event back until its blank line', async () => {
    expect(await eventsOf('data: a\n\ndata: b\n')).toEqual([{ event: 'message', data: 'a' }]);
  });
});

describe('parseEventBlock', () => {
  it('joins data lines, takes CRLF, and keeps a value without the space after the colon', () => {
    expect(parseEventBlock('event:e\r\ndata: one\r\ndata:two')).toEqual({ event: 'e', data: 'one\ntwo' });
  });

  it('has no event without data', () => {
    expect(parseEventBlock('event: e\nid: 3')).toBeUndefined();
  });
});
