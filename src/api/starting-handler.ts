import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { requestIdFrom } from './request-context.js';

/**
 * What the port answers before the API exists (the audit log or the configuration still
 * coming up): alive, not ready, and a 503 with the usual error body for everything else,
 * so a probe or an agent learns why instead of finding nothing listening. Fail-closed:
 * no request reaches a decision.
 */
export function startingHandler(version: string, status: () => string): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    // Nothing is read from the body: let it drain so the connection stays usable.
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return send(res, 200, { status: 'ok', version });
    const message = `starting: ${status()}`;
    if (path === '/readyz')
      return send(res, 503, { status: 'not ready', checks: [{ name: 'startup', ready: false, message }] });
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('Retry-After', '1');
    res.setHeader('X-Request-ID', requestId);
    send(res, 503, { error: { code: 'UNAVAILABLE', message, request_id: requestId } });
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
