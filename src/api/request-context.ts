import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Principal, RecordVisibility } from '../auth/index.js';
import type { Metrics } from '../metrics/index.js';
import { randomUuid } from '../model/index.js';

declare module 'express-serve-static-core' {
  interface Request {
    log: Logger;
    id: string;
    principal?: Principal;
    /** Which records the caller may see, set by requireScope (auth/namespace-access.ts). */
    visibility?: RecordVisibility;
  }
}

/** What a caller's X-Request-ID must look like to be kept (else a UUID replaces it). */
export const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's X-Request-ID when sane, else a new one. */
export function requestIdFrom(offered: string | string[] | undefined): string {
  return typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomUuid();
}

/** One answered request, as the access log and the request counter see it. */
export interface AnsweredRequest {
  /** For a logger not bound to the request (the propose lane keeps no child logger). */
  requestId?: string;
  method: string;
  path: string;
  /** The route pattern, not the path, keeps the metric's label set bounded. */
  route: string;
  status: number;
  /** performance.now() when the request arrived. */
  startedMs: number;
  principal: string | undefined;
}

/** The access log line and the request counter of one answered request. */
export function recordRequest(log: Logger, metrics: Metrics, answered: AnsweredRequest): void {
  metrics.httpRequests.count([answered.method, answered.route, answered.status]);
  log.info(
    {
      // pino leaves undefined members out. (A conditional spread here, first in the literal,
      // would give every line's object a V8 map of its own: over a kilobyte per request.)
      request_id: answered.requestId,
      method: answered.method,
      path: answered.path,
      status: answered.status,
      duration_ms: durationSince(answered.startedMs),
      principal: answered.principal,
    },
    'request',
  );
}

/**
 * The same for a logger already bound to the request's method and path (`boundToRoute`):
 * a route answered on a lane of its own serialises those two once, not on every line
 * (0.46 KB of garbage per request).
 */
export function recordRouteRequest(routeLog: Logger, metrics: Metrics, answered: AnsweredRequest): void {
  metrics.httpRequests.count([answered.method, answered.route, answered.status]);
  routeLog.info(
    {
      request_id: answered.requestId,
      status: answered.status,
      duration_ms: durationSince(answered.startedMs),
      principal: answered.principal,
    },
    'request',
  );
}

/** A child logger whose access lines carry this method and path, for recordRouteRequest. */
export function boundToRoute(log: Logger, method: string, path: string): Logger {
  return log.child({ method, path });
}

function durationSince(startedMs: number): number {
  return Math.round((performance.now() - startedMs) * 100) / 100;
}

/** Gives every request an id (the caller's X-Request-ID when sane) and a child logger bound to it. */
export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const id = requestIdFrom(req.get('x-request-id'));
    req.id = id;
    req.log = logger.child({ request_id: id });
    res.locals.requestId = id;
    res.setHeader('X-Request-ID', id);
    const startedMs = performance.now();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      recordRequest(req.log, metrics, {
        method: req.method,
        path: req.path,
        route: route ? req.baseUrl + route : 'unmatched',
        status: res.statusCode,
        startedMs,
        principal: req.principal?.name,
      });
    });
    next();
  };
}
