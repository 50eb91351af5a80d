import type { Request, Response } from 'express';
import type { AuditEntry } from '../audit/audit-log.js';
import type { ApiDependencies } from './dependencies.js';
import { seesEntry, visibilityOfRequest } from './visible-records.js';

/** Comment lines keep idle connections (and proxies in between) from timing out. */
const HEARTBEAT_MS = 15_000;

/** One server-sent event: its name and its JSON data; `id` lets a client say where it was. */
export interface StreamedEvent {
  event: string;
  data: unknown;
  id?: number;
}

/**
 * Serves text/event-stream from the audit log's new entries: each entry the caller may see
 * (req.visibility) and `toEvent` turns into an event is written, in the log's order, until
 * the client goes or the server shuts down. When RBAC cannot say whether an entry may be
 * seen, the stream ends (fail closed; the client reconnects).
 */
export function streamAuditEvents(
  req: Request,
  res: Response,
  deps: Pick<ApiDependencies, 'audit' | 'shutdown'>,
  toEvent: (entry: AuditEntry) => StreamedEvent | undefined,
): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  res.write(': connected\n\n');
  const visibility = visibilityOfRequest(req);
  const write = (event: StreamedEvent) => {
    const id = event.id === undefined ? '' : `id: ${event.id}\n`;
    res.write(`${id}event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
  };
  // Visibility may take an RBAC answer: a chain keeps the entries in their order.
  let written = Promise.resolve();
  const unsubscribe = deps.audit.subscribe((entry) => {
    const event = toEvent(entry);
    if (!event) return;
    if (visibility.all) {
      write(event);
      return;
    }
    written = written
      .then(async () => {
        if (await seesEntry(visibility, entry)) write(event);
      })
      .catch(() => end());
  });
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const end = () => {
    clearInterval(heartbeat);
    unsubscribe();
    deps.shutdown.removeEventListener('abort', end);
    res.end();
  };
  req.on('close', end);
  deps.shutdown.addEventListener('abort', end);
}

/** Whether the client asked for the live stream rather than a JSON page. */
export function wantsEventStream(req: Request): boolean {
  return req.accepts(['application/json', 'text/event-stream']) === 'text/event-stream';
}
