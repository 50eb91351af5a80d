import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ArbiterError, type ErrorCode } from '../model/index.js';
import { allowedMethods } from './allowed-methods.js';

/** The one place that chooses HTTP status codes for errors. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  ACTOR_MISMATCH: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

/** The error body of semantics.md ("HTTP conventions"). */
export function errorBody(error: ArbiterError, requestId: string) {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
      request_id: requestId,
    },
  };
}

export function sendError(res: Response, error: ArbiterError): void {
  res.status(statusOf(error.code)).json(errorBody(error, res.locals.requestId as string));
}

/** body-parser and http-errors report with `type` and `status`; translate them into our codes. */
function fromHttpError(err: {
  type?: unknown;
  status?: unknown;
  message?: unknown;
}): ArbiterError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new ArbiterError('PAYLOAD_TOO_LARGE', 'request body exceeds 1 MiB');
    case 'entity.parse.failed':
      return new ArbiterError('INVALID_REQUEST', 'request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ArbiterError('UNSUPPORTED_MEDIA_TYPE', String(err.message));
    case 'request.aborted':
      return new ArbiterError('INVALID_REQUEST', 'request body was aborted');
    default:
      break;
  }
  if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
    return new ArbiterError('INVALID_REQUEST', typeof err.message === 'string' ? err.message : 'bad request');
  }
  return undefined;
}

/**
 * Any error as the ArbiterError it is answered with; logged when it is the server's fault.
 * An unknown error is INTERNAL, which callers treat as DENY.
 */
export function asArbiterError(err: unknown, log: Logger): ArbiterError {
  if (err instanceof ArbiterError) {
    if (err.code === 'INTERNAL' || err.code === 'UNAVAILABLE') log.error({ err }, err.message);
    return err;
  }
  const mapped = typeof err === 'object' && err !== null ? fromHttpError(err) : undefined;
  if (mapped) return mapped;
  log.error({ err }, 'unhandled error');
  return new ArbiterError('INTERNAL', 'internal error; treat as DENY');
}

export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendError(res, asArbiterError(err, req.log));
};

/**
 * What no route answered: 405 with Allow when routes take the path with other methods
 * (found in the app's own routes, mounted routers included), else 404.
 */
export const notFoundHandler: RequestHandler = (req, res) => {
  const allow = allowedMethods(req.app.router, req.path);
  if (allow !== undefined && allow.length > 0 && !allow.includes(req.method)) {
    res.setHeader('Allow', allow.join(', '));
    const message = `${req.method} is not allowed on ${req.path}; allowed: ${allow.join(', ')}`;
    sendError(res, new ArbiterError('METHOD_NOT_ALLOWED', message, { allow }));
    return;
  }
  sendError(res, new ArbiterError('NOT_FOUND', `no route for ${req.method} ${req.path}`));
};
