import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { statusOf } from '../api/error-handler.js';
import { ArbiterError } from '../model/index.js';
import {
  admissionRequestOf,
  admissionReview,
  refuse,
  type AdmissionRequest,
  type AdmissionResponse,
} from './admission-review.js';
import { CONFIGURATION_WEBHOOK_PATH, GOVERNANCE_WEBHOOK_PATH } from './admission-settings.js';

/** Object plus oldObject of the largest objects etcd stores (1.5 MiB each), with room. */
export const MAX_ADMISSION_BODY_BYTES = 8 * 1024 * 1024;

export type WebhookName = 'configuration' | 'governance';

export interface WebhookReviewers {
  configuration(request: AdmissionRequest): AdmissionResponse;
  governance(request: AdmissionRequest): Promise<{ response: AdmissionResponse; outcome: string }>;
}

export interface AdmissionObserver {
  /** One answered AdmissionReview; outcome is the decision, allowed/refused, not_governed or error. */
  answered(webhook: WebhookName, operation: string, outcome: string, seconds: number): void;
}

export interface AdmissionHandlerDeps {
  reviewers: WebhookReviewers;
  /** Whether the index is complete: before that, nothing can be decided (503). */
  ready: () => boolean;
  observer: AdmissionObserver;
  logger: Logger;
}

const PATHS: ReadonlyMap<string, WebhookName> = new Map([
  [CONFIGURATION_WEBHOOK_PATH, 'configuration'],
  [GOVERNANCE_WEBHOOK_PATH, 'governance'],
]);

/**
 * Serves AdmissionReviews. Once a review is understood, every failure is answered as a
 * refusal (allowed: false), never as an HTTP error: the API server would apply the
 * failurePolicy to an HTTP error, and with Ignore that would let a governed request through.
 */
export function admissionHandler(deps: AdmissionHandlerDeps) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    // Stryker disable next-line StringLiteral: Node's server always sets req.url, and split always yields [0]
    const webhook = PATHS.get((req.url ?? '').split('?')[0] ?? '');
    if (!webhook) return drainAndFail(req, res, new ArbiterError('NOT_FOUND', `no webhook at ${req.url}`));
    if (req.method !== 'POST')
      return drainAndFail(req, res, new ArbiterError('INVALID_REQUEST', 'webhooks take POST only'));
    if (!deps.ready())
      return drainAndFail(
        req,
        res,
        new ArbiterError('UNAVAILABLE', 'the configuration index is not synced yet'),
      );
    readJson(req).then(
      (body) => review(deps, webhook, body, res),
      (err: unknown) => sendError(res, err),
    );
  };
}

async function review(
  deps: AdmissionHandlerDeps,
  webhook: WebhookName,
  body: unknown,
  res: ServerResponse,
): Promise<void> {
  // From the parsed body to the answer: what Arbiter adds, not the network's share.
  const started = process.hrtime.bigint();
  let request: AdmissionRequest;
  try {
    request = admissionRequestOf(body);
  } catch (err) {
    return sendError(res, err);
  }
  let response: AdmissionResponse;
  let outcome: string;
  try {
    if (webhook === 'configuration') {
      response = deps.reviewers.configuration(request);
      outcome = response.allowed ? 'allowed' : 'refused';
    } else {
      ({ response, outcome } = await deps.reviewers.governance(request));
    }
  } catch (err) {
    deps.logger.error({ err, webhook, uid: request.uid }, 'admission review failed; refusing (fail closed)');
    const message = err instanceof ArbiterError ? err.message : 'internal error';
    response = refuse(
      request.uid,
      403,
      `Arbiter could not decide this request, so it is refused: ${message}`,
    );
    outcome = 'error';
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  deps.observer.answered(webhook, request.operation, outcome, seconds);
  send(res, 200, admissionReview(response));
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) {
      req.resume();
      reject(new ArbiterError('UNSUPPORTED_MEDIA_TYPE', `expected application/json, got ${type || 'none'}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ADMISSION_BODY_BYTES) {
        // Stryker disable next-line StringLiteral: without it, later chunks are dropped just the same (size stays over the limit) and reject is settled
        req.removeAllListeners('data');
        req.resume();
        reject(
          new ArbiterError(
            'PAYLOAD_TOO_LARGE',
            `AdmissionReview larger than ${MAX_ADMISSION_BODY_BYTES} bytes`,
          ),
        );
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new ArbiterError('INVALID_REQUEST', 'the body is not valid JSON'));
      }
    });
  });
}

function sendError(res: ServerResponse, err: unknown): void {
  if (err instanceof ArbiterError) send(res, statusOf(err.code), error(err.code, err.message));
  else send(res, 500, error('INTERNAL', 'internal error'));
}

function error(code: string, message: string) {
  return { error: { code, message } };
}

function drainAndFail(req: IncomingMessage, res: ServerResponse, err: ArbiterError): void {
  req.resume();
  sendError(res, err);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
