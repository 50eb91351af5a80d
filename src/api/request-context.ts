import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../auth/index.js';
import type { Metrics } from '../metrics/index.js';

declare module 'express-serve-static-core' {
  interface Request {
    log: Logger;
    id: string;
    principal?: Principal;
  }
}

/** What a caller's X-Request-ID must look like to be kept (else a UUID replaces it). */
export const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Gives every request an id (the caller's X-Request-ID when sane) and a child logger bound to it. */
export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const offered = req.get('x-request-id');
    const id = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    req.id = id;
    req.log = logger.child({ request_id: id });
    res.locals.requestId = id;
    res.setHeader('X-Request-ID', id);
    const startedNs = process.hrtime.bigint();
    res.on('finish', () => {
      // The route pattern, not the path, keeps the label set bounded.
      const route = (req.route as { path?: string } | undefined)?.path;
      metrics.httpRequests.inc({
        method: req.method,
        route: route ? req.baseUrl + route : 'unmatched',
        status: res.statusCode,
      });
      const durationMs = Number(process.hrtime.bigint() - startedNs) / 1e6;
      req.log.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
          principal: req.principal?.name,
        },
        'request',
      );
    });
    next();
  };
}
