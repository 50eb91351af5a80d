import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { capability } from '../engine/test-fixtures.js';
import { ArbiterError } from '../model/index.js';
import { admissionHandler, MAX_ADMISSION_BODY_BYTES, type WebhookReviewers } from './admission-handler.js';
import type { AdmissionRequest } from './admission-review.js';
import { reviewConfiguration } from './configuration-review.js';
import { reviewGovernedRequest } from './governance-review.js';
import { collectingLogger } from './tls/test-fixtures.js';
import { governedWorld, type GovernedWorld } from './test-governance.js';
import { configMapRequest, configurationRequest } from './test-requests.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  body: any;
}

interface Answered {
  webhook: string;
  operation: string;
  outcome: string;
  seconds: number;
}

const reviewOf = (request: AdmissionRequest) =>
  JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });

/**
 * The handler behind a real node:http server on an ephemeral port, wired as `arbiter serve`
 * wires it: the real configuration and governance reviewers over the real index, engine and
 * file audit log (see test-governance.ts).
 */
describe('admissionHandler', () => {
  let world: GovernedWorld;
  let server: Server;
  let port: number;
  let ready: boolean;
  let answered: Answered[];
  let logs: ReturnType<typeof collectingLogger>;
  let reviewers: WebhookReviewers;

  beforeEach(async () => {
    world = await governedWorld();
    ready = true;
    answered = [];
    logs = collectingLogger();
    reviewers = {
      configuration: (req) => reviewConfiguration(req, world.deps.index.current(), undefined),
      governance: (req) => reviewGovernedRequest(req, world.deps),
    };
    const handler = admissionHandler({
      reviewers: {
        configuration: (req) => reviewers.configuration(req),
        governance: (req) => reviewers.governance(req),
      },
      ready: () => ready,
      observer: {
        answered: (webhook, operation, outcome, seconds) =>
          void answered.push({ webhook, operation, outcome, seconds }),
      },
      logger: logs.logger,
    });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await world.close();
  });

  function send(
    path: string,
    body: string | Buffer,
    options: { method?: string; contentType?: string | null } = {},
  ): Promise<Answer> {
    const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: options.method ?? 'POST',
          headers: {
            ...(contentType === null ? {} : { 'content-type': contentType }),
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: res.headers['content-type'],
              body: text ? JSON.parse(text) : undefined,
            }),
          );
        },
      );
      req.once('error', reject);
      req.end(body);
    });
  }
  const governance = (request: AdmissionRequest) => send('/validate/governance', reviewOf(request));

  describe('the governance webhook', () => {
    it('answers 200 with an AdmissionReview echoing the uid, and reports the outcome', async () => {
      const answer = await governance(configMapRequest({ uid: 'uid-allow' }));
      expect(answer).toEqual({
        status: 200,
        contentType: 'application/json',
        body: {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: 'uid-allow', allowed: true },
        },
      });
      expect(answered).toEqual([
        { webhook: 'governance', operation: 'CREATE', outcome: 'ALLOW', seconds: expect.any(Number) },
      ]);
      expect(answered[0]!.seconds).toBeGreaterThan(0);
      expect(answered[0]!.seconds).toBeLessThan(5);
      expect((await world.entries()).map((e) => e.data.kubernetes)).toEqual([
        expect.objectContaining({ uid: 'uid-allow', operation: 'create' }),
      ]);
    });

    it('passes an unbound identity as not_governed, recording nothing', async () => {
      const answer = await governance(configMapRequest({ uid: 'u-2', userInfo: { username: 'alice' } }));
      expect(answer.body.response).toEqual({ uid: 'u-2', allowed: true });
      expect(answered.map((a) => a.outcome)).toEqual(['not_governed']);
      expect(await world.entries()).toEqual([]);
    });

    it('refuses an escalated delete with 403 in the review (HTTP 200), with warnings', async () => {
      const answer = await governance(configMapRequest({ uid: 'u-3', operation: 'DELETE', object: null }));
      expect(answer.status).toBe(200);
      expect(answer.body.response).toMatchObject({
        uid: 'u-3',
        allowed: false,
        status: {
          code: 403,
          message: expect.stringMatching(/^Arbiter: k8s\.configmaps\.delete .*\(ESCALATE\)/),
        },
        warnings: ['policy trial (enforcementAction warn), rule 1, would have decided DENY'],
      });
      expect(answered).toEqual([expect.objectContaining({ operation: 'DELETE', outcome: 'ESCALATE' })]);
    });

    it('answers a dry run without recording it', async () => {
      const answer = await governance(configMapRequest({ name: 'forbidden', dryRun: true }));
      expect(answer.body.response.status.message).toMatch(/\(dry run: no decision was recorded\)$/);
      expect(answered.map((a) => a.outcome)).toEqual(['DENY']);
      expect(await world.entries()).toEqual([]);
    });

    it('fails closed when the decision cannot be recorded: refused in the review, logged, outcome error', async () => {
      await world.log.close();
      const answer = await governance(configMapRequest({ uid: 'u-closed' }));
      expect(answer).toEqual({
        status: 200,
        contentType: 'application/json',
        body: {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: 'u-closed',
            allowed: false,
            status: {
              code: 403,
              message: 'Arbiter could not decide this request, so it is refused: the audit log is closed',
            },
          },
        },
      });
      expect(answered).toEqual([expect.objectContaining({ webhook: 'governance', outcome: 'error' })]);
      const [record] = logs.records.filter((r) => r.level === 50);
      expect(record).toMatchObject({
        msg: 'admission review failed; refusing (fail closed)',
        webhook: 'governance',
        uid: 'u-closed',
        err: { message: 'the audit log is closed' },
      });
    });

    it('fails closed without leaking the message of an unexpected error', async () => {
      reviewers.governance = () => Promise.reject(new TypeError('secret internals'));
      const answer = await governance(configMapRequest({ uid: 'u-boom' }));
      expect(answer.body.response).toEqual({
        uid: 'u-boom',
        allowed: false,
        status: {
          code: 403,
          message: 'Arbiter could not decide this request, so it is refused: internal error',
        },
      });
      expect(answered.map((a) => a.outcome)).toEqual(['error']);
    });
  });

  describe('the configuration webhook', () => {
    const capabilityWrite = (name: string) =>
      reviewOf(configurationRequest({ ...capability(name), metadata: { name: 'cap-x' } }, { uid: 'cfg-9' }));

    it('allows a valid object, reporting allowed', async () => {
      const answer = await send('/validate/configuration', capabilityWrite('tickets.create'));
      expect(answer.body).toEqual({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'cfg-9', allowed: true },
      });
      expect(answered).toEqual([
        { webhook: 'configuration', operation: 'CREATE', outcome: 'allowed', seconds: expect.any(Number) },
      ]);
    });

    it('refuses a duplicate capability with 422, reporting refused', async () => {
      const answer = await send('/validate/configuration', capabilityWrite('k8s.configmaps.create'));
      expect(answer.status).toBe(200);
      expect(answer.body.response).toMatchObject({ uid: 'cfg-9', allowed: false, status: { code: 422 } });
      expect(answered.map((a) => [a.webhook, a.outcome])).toEqual([['configuration', 'refused']]);
    });

    it('fails closed when the reviewer throws, naming an ArbiterError', async () => {
      reviewers.configuration = () => {
        throw new ArbiterError('UNAVAILABLE', 'index gone');
      };
      const answer = await send('/validate/configuration', capabilityWrite('tickets.create'));
      expect(answer.body.response).toEqual({
        uid: 'cfg-9',
        allowed: false,
        status: { code: 403, message: 'Arbiter could not decide this request, so it is refused: index gone' },
      });
      expect(answered.map((a) => [a.webhook, a.outcome])).toEqual([['configuration', 'error']]);
    });

    it('ignores a query string in the path (the API server may add ?timeout=5s)', async () => {
      const answer = await send('/validate/configuration?timeout=5s', capabilityWrite('tickets.create'));
      expect(answer.body.response).toEqual({ uid: 'cfg-9', allowed: true });
    });
  });

  describe('what is not a review it can answer gets an HTTP error with a code, and nothing is decided', () => {
    const valid = () => reviewOf(configMapRequest());

    it.each([
      ['an unknown path', '/elsewhere', {}, 404, 'NOT_FOUND', 'no webhook at /elsewhere'],
      [
        'a path below a webhook',
        '/validate/governance/x',
        {},
        404,
        'NOT_FOUND',
        'no webhook at /validate/governance/x',
      ],
      ['a GET', '/validate/governance', { method: 'GET' }, 400, 'INVALID_REQUEST', 'webhooks take POST only'],
      [
        'a PUT',
        '/validate/configuration',
        { method: 'PUT' },
        400,
        'INVALID_REQUEST',
        'webhooks take POST only',
      ],
      [
        'text/plain',
        '/validate/governance',
        { contentType: 'text/plain' },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'expected application/json, got text/plain',
      ],
      [
        'no content type',
        '/validate/governance',
        { contentType: null },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'expected application/json, got none',
      ],
      [
        'application/jsonp',
        '/validate/governance',
        { contentType: 'application/jsonp' },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'expected application/json, got application/jsonp',
      ],
      [
        'a prefixed json type',
        '/validate/governance',
        { contentType: 'x-application/json' },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'expected application/json, got x-application/json',
      ],
    ] as const)('%s', async (_name, path, options, status, code, message) => {
      const answer = await send(path, valid(), options);
      expect(answer).toEqual({ status, contentType: 'application/json', body: { error: { code, message } } });
      expect(answered).toEqual([]);
      expect(await world.entries()).toEqual([]);
    });

    it('accepts application/json with parameters and in any case', async () => {
      for (const contentType of ['application/json; charset=utf-8', 'Application/JSON'])
        expect((await send('/validate/governance', valid(), { contentType })).status).toBe(200);
    });

    it('a body that is not JSON', async () => {
      expect(await send('/validate/governance', '{not json')).toEqual({
        status: 400,
        contentType: 'application/json',
        body: { error: { code: 'INVALID_REQUEST', message: 'the body is not valid JSON' } },
      });
      expect(answered).toEqual([]);
    });

    it('JSON that is not an AdmissionReview, naming what is wrong', async () => {
      const answer = await send(
        '/validate/governance',
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
      );
      expect(answer).toEqual({
        status: 400,
        contentType: 'application/json',
        body: {
          error: {
            code: 'INVALID_REQUEST',
            message: 'invalid AdmissionReview: request is required',
          },
        },
      });
      expect((await send('/validate/configuration', '[]')).body.error.code).toBe('INVALID_REQUEST');
      expect(answered).toEqual([]);
    });

    it('before the index is synced: 503, so the failurePolicy applies, even for a valid review', async () => {
      ready = false;
      expect(await send('/validate/governance', valid())).toEqual({
        status: 503,
        contentType: 'application/json',
        body: { error: { code: 'UNAVAILABLE', message: 'the configuration index is not synced yet' } },
      });
      expect((await send('/elsewhere', valid())).status).toBe(404);
      expect((await send('/validate/governance', valid(), { method: 'GET' })).status).toBe(400);
      expect(await world.entries()).toEqual([]);
      ready = true;
      expect((await send('/validate/governance', valid())).status).toBe(200);
    });

    it(`a body over ${MAX_ADMISSION_BODY_BYTES} bytes is refused with 413; one of exactly that size is read`, async () => {
      const json = reviewOf(configMapRequest({ uid: 'big' }));
      const padded = (size: number) => Buffer.from(json.padEnd(size, ' '));
      expect(await send('/validate/governance', padded(MAX_ADMISSION_BODY_BYTES + 1))).toEqual({
        status: 413,
        contentType: 'application/json',
        body: {
          error: {
            code: 'PAYLOAD_TOO_LARGE',
            message: `AdmissionReview larger than ${MAX_ADMISSION_BODY_BYTES} bytes`,
          },
        },
      });
      expect(answered).toEqual([]);
      const answer = await send('/validate/governance', padded(MAX_ADMISSION_BODY_BYTES));
      expect(answer.body.response).toEqual({ uid: 'big', allowed: true });
    });

    it('survives a client that hangs up in the middle of a body, and keeps serving', async () => {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            'POST /validate/governance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
              'Content-Length: 1000\r\n\r\n{"apiVersion":',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 20);
        });
        socket.once('error', reject);
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await governance(configMapRequest())).status).toBe(200);
      expect(answered.map((a) => a.outcome)).toEqual(['ALLOW']);
    });
  });
});

/** The handler called directly, with a request stream and a response the test controls. */
describe('admissionHandler, on a broken connection', () => {
  function handled(options: { headersSent: boolean }) {
    const req = Object.assign(new PassThrough(), {
      url: '/validate/governance',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    const res = { headersSent: options.headersSent, writeHead: vi.fn(), end: vi.fn() };
    const handler = admissionHandler({
      reviewers: {
        configuration: () => {
          throw new Error('not reached');
        },
        governance: () => Promise.reject(new Error('not reached')),
      },
      ready: () => true,
      observer: { answered: () => undefined },
      logger: collectingLogger().logger,
    });
    handler(req as never, res as never);
    return { req, res };
  }

  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('answers a request stream that fails with 500 and no detail of the error', async () => {
    const { req, res } = handled({ headersSent: false });
    req.emit('error', new Error('socket hang up: secret detail'));
    await settled();
    expect(res.writeHead).toHaveBeenCalledWith(500, { 'Content-Type': 'application/json' });
    expect(JSON.parse(String(res.end.mock.calls[0]?.[0]))).toEqual({
      error: { code: 'INTERNAL', message: 'internal error' },
    });
  });

  it('writes nothing once the response is under way (Node already answered, e.g. a timeout)', async () => {
    const { req, res } = handled({ headersSent: true });
    req.emit('error', new Error('aborted'));
    await settled();
    expect(res.writeHead).not.toHaveBeenCalled();
    expect(res.end).not.toHaveBeenCalled();
  });
});
