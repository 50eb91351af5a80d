import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ArbiterError, type ErrorCode } from '../model/index.js';

/** The one place that chooses HTTP status codes for errors. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  ACTOR_MISMATCH: 403,
  NOT_FOUND: 404,
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

export function sendError(res: Response, error: ArbiterError): void {
  const body = {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
      request_id: res.locals.requestId as string,
    },
  };
  res.status(statusOf(error.code)).json(body);
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

export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof ArbiterError) {
    if (err.code === 'INTERNAL' || err.code === 'UNAVAILABLE') req.log.error({ err }, err.message);
    sendError(res, err);
    return;
  }
  const mapped = typeof err === 'object' && err !== null ? fromHttpError(err) : undefined;
  if (mapped) {
    sendError(res, mapped);
    return;
  }
  req.log.error({ err }, 'unhandled error');
  sendError(res, new ArbiterError('INTERNAL', 'internal error; treat as DENY'));
};

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new ArbiterError('NOT_FOUND', `no route for ${req.method} ${req.path}`));
};
