import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KEYS, useArbiter } from '../support/arbiter-process.js';

/**
 * Propose has its own lane past express (src/api/propose-lane.ts) for the plain request;
 * the same call with a trailing slash goes through express's route. Every request here is
 * sent both ways and must be answered the same: status, headers, error body, decision.
 */
const arbiter = useArbiter({ args: ['--key-rate-limit', '100000', '--key-burst', '100000'] });

const LANE = '/api/v1/governance/propose';
const EXPRESS = '/api/v1/governance/propose/';

interface Sent {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in pieces without a Content-Length (Transfer-Encoding: chunked). */
  chunked?: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(path: string, sent: Sent): Promise<Answer> {
  const body = sent.body === undefined ? undefined : Buffer.from(sent.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${KEYS.agent}`,
    ...sent.headers,
  };
  if (body && !sent.chunked) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = request(`${arbiter.url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    if (body && sent.chunked) {
      const half = Math.floor(body.length / 2);
      req.write(body.subarray(0, half));
      req.end(body.subarray(half));
    } else {
      req.end(body);
    }
  });
}

/** What must be equal both ways (ids and timestamps differ by nature). */
function comparable(answer: Answer) {
  const json = JSON.parse(answer.text) as Record<string, any>;
  const error = json.error as Record<string, unknown> | undefined;
  return {
    status: answer.status,
    contentType: answer.headers['content-type'],
    contentLength: answer.headers['content-length'] === undefined ? 'absent' : 'present',
    wwwAuthenticate: answer.headers['www-authenticate'],
    rateLimit: answer.headers['x-ratelimit-limit'],
    requestIdShape: /^[0-9a-f-]{36}$/.test(String(answer.headers['x-request-id']))
      ? 'uuid'
      : answer.headers['x-request-id'],
    body: error
      ? {
          code: error.code,
          message: error.message,
          details: error.details,
          same_request_id: error.request_id === answer.headers['x-request-id'],
        }
      : {
          outcome: json.outcome,
          reason: json.reason,
          risk_score: json.risk_score,
          constraints: json.constraints,
        },
  };
}

async function bothWays(sent: Sent) {
  const viaLane = comparable(await send(LANE, sent));
  const viaExpress = comparable(await send(EXPRESS, sent));
  expect(viaLane).toEqual(viaExpress);
  return viaLane;
}

function proposal(capability: string, parameters: Record<string, unknown>, actor = 'agent-001'): string {
  return JSON.stringify({ actor: { id: actor, type: 'ai-agent' }, action: { capability, parameters } });
}

const ALLOWED = proposal('payments.transfer', { amount: 10, currency: 'USD', to: 'acct-1' });
const DENIED = proposal('payments.transfer', { amount: 50_000, currency: 'USD', to: 'acct-1' });

describe('propose: the lane answers as express does', () => {
  it('decisions: ALLOW, DENY by a policy, REQUIRE_CONFIRMATION, unregistered', async () => {
    expect((await bothWays({ body: ALLOWED })).body.outcome).toBe('ALLOW');
    expect((await bothWays({ body: DENIED })).body.outcome).toBe('DENY');
    const confirm = proposal('database.write', { database: 'production', statement: 'delete' });
    expect((await bothWays({ body: confirm })).body.outcome).toBe('REQUIRE_CONFIRMATION');
    expect((await bothWays({ body: proposal('no.such', {}) })).body.outcome).toBe('DENY');
  });

  it('authentication, scope and actor failures', async () => {
    const noKey = await bothWays({ body: ALLOWED, headers: { authorization: '' } });
    expect(noKey).toMatchObject({ status: 401, wwwAuthenticate: 'Bearer realm="arbiter"' });
    const badKey = await bothWays({ body: ALLOWED, headers: { authorization: 'Bearer not-a-key' } });
    expect(badKey.wwwAuthenticate).toContain('invalid_token');
    const readOnly = await bothWays({ body: ALLOWED, headers: { authorization: `Bearer ${KEYS.auditor}` } });
    expect(readOnly.body.code).toBe('FORBIDDEN');
    const otherActor = await bothWays({ body: proposal('payments.transfer', { amount: 1 }, 'agent-002') });
    expect(otherActor.body.code).toBe('ACTOR_MISMATCH');
  });

  it('bodies express parses differently from JSON.parse: empty, a byte order mark, a scalar, whitespace', async () => {
    expect((await bothWays({ body: '' })).body.message).toContain('actor');
    expect(
      (await bothWays({ body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(ALLOWED)]) }))
        .status,
    ).toBe(200);
    expect((await bothWays({ body: '"a string"' })).body.message).toBe('request body is not valid JSON');
    expect((await bothWays({ body: ' \n\t[1]' })).body.code).toBe('INVALID_REQUEST');
    expect((await bothWays({ body: `  \r\n${ALLOWED}  ` })).status).toBe(200);
    expect((await bothWays({ body: '{"actor":' })).body.message).toBe('request body is not valid JSON');
    const invalidUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
    expect((await bothWays({ body: invalidUtf8 })).status).toBe(400);
  });

  it('hostile shapes: deep nesting, prototype keys, schema errors with their details', async () => {
    const deep = `${'['.repeat(40)}${']'.repeat(40)}`;
    expect((await bothWays({ body: deep })).body.message).toContain('nests deeper than 32');
    const polluting = ALLOWED.replace('"amount":10', '"__proto__":{"x":1},"amount":10');
    expect((await bothWays({ body: polluting })).body.message).toContain('__proto__');
    const noCapability = JSON.stringify({
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: { parameters: {} },
    });
    const invalid = await bothWays({ body: noCapability });
    expect(invalid.body.details).toEqual({
      errors: [expect.objectContaining({ field: 'action.capability' })],
    });
  });

  it('sizes: a chunked body past 1 MiB is refused by the lane as by express; one within it decides', async () => {
    const huge = proposal('payments.transfer', { amount: 10, currency: 'USD', to: 'x'.repeat(1024 * 1024) });
    expect((await bothWays({ body: huge, chunked: true })).status).toBe(413);
    expect((await bothWays({ body: huge })).status).toBe(413);
    expect((await bothWays({ body: ALLOWED, chunked: true })).status).toBe(200);
  });

  it('a client that hangs up in the middle of its body costs nothing: the server answers the next call', async () => {
    for (const path of [LANE, EXPRESS]) {
      const socket = connect(arbiter.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.agent}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"actor":',
      );
      await sleep(50);
      socket.destroy();
      await sleep(50);
      expect((await send(path, { body: ALLOWED })).status).toBe(200);
    }
    expect(arbiter.child.exitCode).toBeNull();
  });

  it('media types and request ids', async () => {
    const utf8 = await bothWays({
      body: ALLOWED,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(utf8.status).toBe(200);
    const latin1 = await bothWays({
      body: ALLOWED,
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(latin1.status).toBe(415);
    expect((await bothWays({ body: ALLOWED, headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    const kept = await bothWays({ body: ALLOWED, headers: { 'x-request-id': 'trace-42.a_b' } });
    expect(kept.requestIdShape).toBe('trace-42.a_b');
    const replaced = await bothWays({ body: DENIED, headers: { 'x-request-id': 'bad id!' } });
    expect(replaced.requestIdShape).toBe('uuid');
  });

  it('both ways are counted under the one route and logged with the request id', async () => {
    await send(LANE, { body: ALLOWED, headers: { 'x-request-id': 'lane-log-check' } });
    await send(EXPRESS, { body: ALLOWED, headers: { 'x-request-id': 'express-log-check' } });
    const metrics = await (await fetch(`${arbiter.url}/metrics`)).text();
    expect(metrics).toMatch(
      /arbiter_http_requests_total\{method="POST",route="\/api\/v1\/governance\/propose",status="200"\} \d+/,
    );
    const accessLine = async (requestId: string) => {
      let found: string | undefined;
      await expect
        .poll(() => {
          found = arbiter.logs.find(
            (line) => line.includes(`"request_id":"${requestId}"`) && line.includes('"msg":"request"'),
          );
          return found;
        })
        .toBeDefined();
      return JSON.parse(found!) as Record<string, unknown>;
    };
    const lane = await accessLine('lane-log-check');
    const viaExpress = await accessLine('express-log-check');
    // The lane's logger carries method and path as bindings: the same line, the same members.
    expect(lane).toMatchObject({ method: 'POST', path: LANE, status: 200, msg: 'request' });
    expect(typeof lane.duration_ms).toBe('number');
    expect(lane.principal).toBe(viaExpress.principal);
    expect(Object.keys(lane).sort()).toEqual(Object.keys(viaExpress).sort());
  });
});
