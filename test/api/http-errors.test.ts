import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../env/free-ports.js';
import { call, KEYS, useArbiter, type CallResult } from '../support/arbiter-process.js';

/**
 * Errors a person can read, from `arbiter serve` as clients meet them: a wrong method, a
 * value outside its enum, a bad limit, an empty body. With the tool proxy on (its upstream
 * need not answer: no session is opened here), so /mcp is routed too.
 */
const arbiter = useArbiter({ args: ['--mcp-server', `notes=http://127.0.0.1:${await freePort()}/mcp`] });

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

function allowOf(res: CallResult): string[] {
  return (res.headers.get('allow') ?? '').split(/,\s*/).filter(Boolean);
}

/** A 405 with Allow, in the usual error body, for `method` on `path`. */
async function expectMethodNotAllowed(method: string, path: string, key?: string): Promise<string[]> {
  const res = await call(arbiter.url, method, path, key ? { key } : {});
  const what = `${method} ${path}: ${JSON.stringify(res.body)}`;
  expect(res.status, what).toBe(405);
  const allow = allowOf(res);
  expect(allow.length, what).toBeGreaterThan(0);
  expect(allow, what).not.toContain(method);
  expect(res.body.error).toMatchObject({
    code: 'METHOD_NOT_ALLOWED',
    message: `${method} is not allowed on ${path.split('?')[0]}; allowed: ${allow.join(', ')}`,
    details: { allow },
    request_id: expect.any(String),
  });
  return allow;
}

describe('a known path with a method it does not take', () => {
  it('answers 405 with Allow on every router, from the routes that exist', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['DELETE', '/api/v1/governance/propose', ['POST']],
      ['PUT', '/api/v1/capabilities', ['GET', 'HEAD', 'POST']],
      ['POST', '/api/v1/governance/decisions/x', ['GET', 'HEAD']],
      ['GET', '/api/v1/governance/decisions/x/approve', ['POST']],
      ['POST', '/api/v1/audit/verify', ['GET', 'HEAD']],
      ['GET', '/api/v1/audit/archive', ['POST']],
      ['POST', '/api/v1/auth/whoami', ['GET', 'HEAD']],
      ['POST', '/api/v1/openapi.json', ['GET', 'HEAD']],
      ['POST', '/healthz', ['GET', 'HEAD']],
      ['DELETE', '/readyz', ['GET', 'HEAD']],
      ['POST', '/metrics', ['GET', 'HEAD']],
      ['POST', '/console/', ['GET', 'HEAD']],
      ['PUT', '/console/index.html', ['GET', 'HEAD']],
      ['PUT', '/mcp/notes', ['DELETE', 'POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const allow = await expectMethodNotAllowed(method, path, KEYS.admin);
      // At least these (a route added later may add a method), sorted.
      expect(allow, `${method} ${path}`).toEqual(expect.arrayContaining(allowed));
      expect(allow).toEqual([...allow].sort());
    }
  });

  it('takes every method its Allow lists (no 405, no "no route")', async () => {
    for (const path of ['/api/v1/policies/prod-writes', '/api/v1/actors/agent-001/grants', '/mcp/notes']) {
      const allow = await expectMethodNotAllowed('PATCH', path, KEYS.admin);
      for (const method of allow) {
        const res = await call(arbiter.url, method, path, { key: KEYS.admin });
        expect(res.status, `${method} ${path}`).not.toBe(405);
        expect(JSON.stringify(res.body ?? ''), `${method} ${path}`).not.toContain('no route for');
      }
    }
  });

  it('answers 405 for each path of the OpenAPI document and a method it does not list there', async () => {
    const openapi = (await call(arbiter.url, 'GET', '/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    for (const [template, operations] of Object.entries(openapi.paths)) {
      const path = template.replace(/\{[^}]+\}/g, 'x');
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      const method = METHODS.find((m) => !documented.includes(m))!;
      const allow = await expectMethodNotAllowed(method, path);
      expect(allow, path).toEqual(expect.arrayContaining(documented));
      const documentedOperation = Object.values(operations)[0] as { responses: Record<string, unknown> };
      expect(Object.keys(documentedOperation.responses), template).toContain('405');
    }
  });

  it('still answers 404 for a path no route has, before authentication', async () => {
    const res = await call(arbiter.url, 'GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
    expect(res.body.error).toMatchObject({
      code: 'NOT_FOUND',
      message: 'no route for GET /api/v1/nothing-here',
    });
  });
});

describe('validation messages', () => {
  it('an enum error lists the allowed values', async () => {
    const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'robot' },
        action: { capability: 'database.query', parameters: {} },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'invalid proposal: actor.type must be one of ai-agent, ai-copilot, automation, human',
    );
    expect(res.body.error.details.errors).toEqual([
      { field: 'actor.type', message: 'must be one of ai-agent, ai-copilot, automation, human' },
    ]);
  });

  it('a missing field is required, an unknown one not allowed', async () => {
    const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: { actor: { id: 'agent-001', type: 'ai-agent' }, extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'invalid proposal: action is required; extra is not an allowed field',
    );
  });

  it('a limit that is not a whole number from 1 to 200 says so, on every list', async () => {
    for (const path of [
      '/api/v1/governance/decisions',
      '/api/v1/governance/pending',
      '/api/v1/capabilities',
      '/api/v1/policies',
      '/api/v1/actors/agent-001/grants',
      '/api/v1/audit/log',
      '/api/v1/audit/events',
    ]) {
      for (const limit of ['abc', '0', '201', '1.5', '1e2', '']) {
        const res = await call(arbiter.url, 'GET', `${path}?limit=${limit}`, { key: KEYS.admin });
        expect(res.status, `${path}?limit=${limit}`).toBe(400);
        expect(res.body.error.message, `${path}?limit=${limit}`).toBe(
          'invalid query: limit must be a whole number from 1 to 200',
        );
      }
      const ok = await call(arbiter.url, 'GET', `${path}?limit=200`, { key: KEYS.admin });
      expect(ok.status, path).toBe(200);
    }
  });
});

describe('an empty body declared as JSON', () => {
  /** A request with no Content-Length and no Transfer-Encoding: no body at all. */
  async function withoutBody(method: string, path: string, headers: Record<string, string>) {
    const socket = connect(arbiter.port, '127.0.0.1');
    const head = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
    socket.end(`${head.join('\r\n')}\r\n\r\n`);
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    const [status] = text.split('\r\n', 1);
    return {
      status: Number(status!.split(' ')[1]),
      body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)),
    };
  }

  it('is an invalid body (400), not a wrong content type, sent with or without Content-Length', async () => {
    for (const path of ['/api/v1/governance/propose', '/api/v1/capabilities']) {
      const headers = { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' };
      const absent = await withoutBody('POST', path, headers);
      const empty = await call(arbiter.url, 'POST', path, { rawBody: '', headers });
      for (const res of [absent, empty]) {
        expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.code).toBe('INVALID_REQUEST');
        expect(res.body.error.message).not.toMatch(/content-type/i);
      }
      expect(absent.body.error.message).toBe(empty.body.error.message);
    }
  });

  it('without a Content-Type is still refused as one', async () => {
    const res = await withoutBody('POST', '/api/v1/capabilities', { authorization: `Bearer ${KEYS.admin}` });
    expect(res.status).toBe(415);
    expect(res.body.error.message).toBe('expected Content-Type application/json, got none');
  });
});
