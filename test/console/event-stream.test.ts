import { describe, expect, it } from 'vitest';
import { readEventStream, type ServerEvent } from '../../console/src/api/event-stream.js';

/** A body delivered in the given chunks, as a network would split it. */
function body(chunks: string[]): ReadableStream<BufferSource> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function eventsOf(chunks: string[]): Promise<ServerEvent[]> {
  const events: ServerEvent[] = [];
  await readEventStream(body(chunks), (e) => events.push(e));
  return events;
}

describe('the console reads text/event-stream from fetch (EventSource cannot send Authorization)', () => {
  it('reads the events /audit/events writes, whatever the chunk boundaries', async () => {
    const stream =
      ': connected\n\nid: 7\nevent: governance.decision\ndata: {"seq":7}\n\n: keep-alive\n\nid: 8\nevent: governance.review\ndata: {"seq":8}\n\n';
    const expected = [
      { event: 'governance.decision', data: '{"seq":7}', id: '7' },
      { event: 'governance.review', data: '{"seq":8}', id: '8' },
    ];
    expect(await eventsOf([stream])).toEqual(expected);
    expect(await eventsOf(stream.split(''))).toEqual(expected);
    expect(await eventsOf(stream.replace(/\n/g, '\r\n').split(/(?<=\r)/))).toEqual(expected);
  });

  it('joins multi-line data, defaults the event name, and drops an event cut off by the end of the stream', async () => {
    expect(await eventsOf(['data: a\ndata: b\n\n', 'data: cut off'])).toEqual([
      { event: 'message', data: 'a\nb' },
    ]);
  });
});
