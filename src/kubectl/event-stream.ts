/** One event of a text/event-stream body. */
export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * The events of a text/event-stream body as they arrive (the WHATWG format). Comments
 * (Arbiter's `: connected` and `: keep-alive`) and events without data are skipped.
 */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    const blocks = buffered.split(/\r?\n\r?\n/);
    buffered = blocks.pop() ?? '';
    for (const block of blocks) {
      const event = parseEventBlock(block);
      if (event) yield event;
    }
  }
}

/** The fields of one event (the lines between two blank lines). */
export function parseEventBlock(block: string): ServerSentEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const [field, value] = fieldOf(line);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return undefined;
  return { event, data: data.join('\n'), ...(id === undefined ? {} : { id }) };
}

/** `name: value` (one space after the colon is not part of the value), or a bare name. */
function fieldOf(line: string): [string, string] {
  const colon = line.indexOf(':');
  if (colon === -1) return [line, ''];
  const value = line.slice(colon + 1);
  return [line.slice(0, colon), value.startsWith(' ') ? value.slice(1) : value];
}
