/** One server-sent event. */
export interface ServerEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Reads a text/event-stream body event by event (the WHATWG format: `field: value` lines,
 * a blank line ends an event, `:` lines are comments). fetch streaming stands in for
 * EventSource, which cannot send an Authorization header.
 */
export async function readEventStream(
  body: ReadableStream<BufferSource>,
  onEvent: (event: ServerEvent) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let fields: Partial<ServerEvent> & { dataLines: string[] } = { dataLines: [] };
  const dispatch = () => {
    if (fields.dataLines.length > 0) {
      onEvent({
        event: fields.event ?? 'message',
        data: fields.dataLines.join('\n'),
        ...(fields.id ? { id: fields.id } : {}),
      });
    }
    fields = { dataLines: [] };
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    // A chunk ending in \r may be half of a \r\n: keep it until the next chunk says.
    const held = buffer.endsWith('\r') ? '\r' : '';
    const lines = buffer.slice(0, buffer.length - held.length).split(/\r\n|\r|\n/);
    buffer = (lines.pop() ?? '') + held;
    for (const line of lines) {
      if (line === '') dispatch();
      else if (!line.startsWith(':')) readField(line, fields);
    }
  }
}

function readField(line: string, fields: Partial<ServerEvent> & { dataLines: string[] }): void {
  const colon = line.indexOf(':');
  const name = colon < 0 ? line : line.slice(0, colon);
  const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
  if (name === 'data') fields.dataLines.push(value);
  else if (name === 'event') fields.event = value;
  else if (name === 'id') fields.id = value;
}
