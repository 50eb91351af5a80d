import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { KeyRateLimiter, Principal } from '../auth/index.js';
import type { Metrics } from '../metrics/index.js';
import { ArbiterError } from '../model/index.js';
import { identifyCaller, permitCaller, type Authenticator } from './authenticate.js';
import { asArbiterError, errorBody, statusOf } from './error-handler.js';
import { bodyShapeProblem, MAX_BODY_BYTES } from './json-body.js';
import type { Proposer } from './proposer.js';
import { boundToRoute, recordRouteRequest, requestIdFrom } from './request-context.js';

export const PROPOSE_PATH = '/api/v1/governance/propose';

/** `application/json`, alone or with a UTF-8 charset: the only media type the lane reads itself. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i;
const UTF8_BOM = 0xfeff;

export interface ProposeLaneDeps {
  logger: Logger;
  metrics: Metrics;
  authenticator: Authenticator;
  keyLimiter: KeyRateLimiter;
  clock: () => Date;
  propose: Proposer;
}

/**
 * POST /api/v1/governance/propose without express: agents call it before every action, and
 * express's generic work per request (router, body parser, child logger) was most of what
 * it cost. Only the plain form takes the lane: the exact path, `application/json` in UTF-8,
 * a declared length within the limit, no content encoding. Everything else, including odd
 * variants of the same call, goes to `app`, whose propose route shares the lane's
 * authentication, validation, decision and error format (test/api/propose-lane.test.ts
 * sends the same requests both ways).
 */
export function withProposeLane(deps: ProposeLaneDeps, app: RequestListener): RequestListener {
  const accessLog = boundToRoute(deps.logger, 'POST', PROPOSE_PATH);
  return (req, res) => {
    if (!takesLane(req)) {
      app(req, res);
      return;
    }
    answer(deps, accessLog, req, res).catch((err: unknown) => {
      // Only writing the answer can get here; the connection is unusable, close it.
      deps.logger.error({ err }, 'propose: the answer could not be written');
      res.destroy();
    });
  };
}

function takesLane(req: IncomingMessage): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  if (!url.startsWith(PROPOSE_PATH)) return false;
  if (url.length !== PROPOSE_PATH.length && url[PROPOSE_PATH.length] !== '?') return false;
  const headers = req.headers;
  if (headers['content-encoding'] !== undefined) return false;
  const type = headers['content-type'];
  if (type === undefined || !PLAIN_JSON.test(type)) return false;
  const length = headers['content-length'];
  // Without a length the body is chunked (or absent: express answers that).
  if (length === undefined) return headers['transfer-encoding'] !== undefined;
  return Number(length) <= MAX_BODY_BYTES;
}

async function answer(
  deps: ProposeLaneDeps,
  accessLog: Logger,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now();
  const requestId = requestIdFrom(req.headers['x-request-id']);
  const headers: Record<string, string> = { 'X-Request-ID': requestId };
  const setHeader = (name: string, value: string) => {
    headers[name] = value;
  };
  let principal: Principal | undefined;
  let status = 200;
  let body: string;
  try {
    principal = await identifyCaller(deps.authenticator, req.headers.authorization, setHeader);
    permitCaller(principal, 'governance:propose', deps.keyLimiter, deps.clock().getTime(), setHeader);
    const decision = await deps.propose(principal, await readJson(req));
    body = JSON.stringify(decision);
  } catch (err) {
    const error = asArbiterError(err, deps.logger.child({ request_id: requestId }));
    status = statusOf(error.code);
    body = JSON.stringify(errorBody(error, requestId));
  }
  headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(body);
  recordRouteRequest(accessLog, deps.metrics, {
    requestId,
    method: 'POST',
    path: PROPOSE_PATH,
    route: PROPOSE_PATH,
    status,
    startedMs,
    principal: principal?.name,
  });
}

/** The body as express's JSON parser (strict, 1 MiB) and jsonBody would give it, or their error. */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: ArbiterError) => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      // As express's body parser: stop reading; the rest of a hostile body is never buffered.
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) fail(new ArbiterError('PAYLOAD_TOO_LARGE', 'request body exceeds 1 MiB'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        resolve(parseBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    req.on('data', onData);
    req.on('end', onEnd);
    const aborted = () => fail(new ArbiterError('INVALID_REQUEST', 'request body was aborted'));
    // on, not once: once wraps each listener in two more objects, and a second fail does nothing.
    req.on('aborted', aborted);
    req.on('error', aborted);
  });
}

function parseBody(bytes: Buffer): unknown {
  let text = bytes.toString('utf8');
  // express decodes with iconv-lite, which drops a byte order mark.
  if (text.charCodeAt(0) === UTF8_BOM) text = text.slice(1);
  // An empty body is {} for express's parser too (then not a valid proposal).
  if (text.length === 0) return {};
  const first = text[text.search(/[^ \t\n\r]/)];
  if (first !== '{' && first !== '[') throw notJson();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJson();
  }
  const problem = bodyShapeProblem(value);
  if (problem) throw new ArbiterError('INVALID_REQUEST', problem);
  return value;
}

function notJson(): ArbiterError {
  return new ArbiterError('INVALID_REQUEST', 'request body is not valid JSON');
}
