import type { ApiClient } from './client.js';
import { readEventStream, type ServerEvent } from './event-stream.js';
import type { AuditEntry } from './types.js';

export type FeedState = 'connecting' | 'live' | 'reconnecting';

/**
 * Follows a text/event-stream of the API until stopped, reconnecting after a dropped
 * stream with a growing delay (1 s to 30 s). Returns the stop function.
 */
export function followEventStream(
  client: ApiClient,
  path: string,
  onEvent: (event: ServerEvent) => void,
  onState: (state: FeedState) => void,
): () => void {
  const stop = new AbortController();
  let delayMs = 1_000;
  const run = async () => {
    while (!stop.signal.aborted) {
      try {
        onState('connecting');
        const response = await client.open(path, 'text/event-stream', stop.signal);
        onState('live');
        delayMs = 1_000;
        await readEventStream(response.body!, onEvent);
      } catch {
        // a dropped stream or a refused request: try again after the delay
      }
      if (stop.signal.aborted) return;
      onState('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(delayMs * 2, 30_000);
    }
  };
  void run();
  return () => stop.abort();
}

/** The audit log's new entries (/audit/events, audit:read). */
export function followAuditFeed(
  client: ApiClient,
  onEntry: (entry: AuditEntry) => void,
  onState: (state: FeedState) => void,
): () => void {
  return followEventStream(
    client,
    'audit/events',
    (event) => onEntry(JSON.parse(event.data) as AuditEntry),
    onState,
  );
}
