import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter({ args: ['--key-rate-limit', '100000', '--key-burst', '100000'] });

const WRITES: Array<[string, string]> = [
  ['POST', '/api/v1/governance/propose'],
  ['POST', '/api/v1/capabilities'],
  ['POST', '/api/v1/policies'],
  ['PUT', '/api/v1/policies/prod-writes'],
  ['POST', '/api/v1/actors/agent-9/grants'],
  ['POST', '/api/v1/governance/decisions/x/approve'],
  ['POST', '/api/v1/governance/decisions/x/execution'],
];
const READS = [
  '/api/v1/governance/decisions',
  '/api/v1/capabilities',
  '/api/v1/policies',
  '/api/v1/actors/agent-001/grants',
  '/api/v1/audit/events',
  '/api/v1/audit/log',
];

function expectClientError(res: { status: number; body: any }, what: string) {
  expect(res.status, what).toBeGreaterThanOrEqual(400);
  expect(res.status, what).toBeLessThan(500);
  expect(res.body?.error?.code, what).toEqual(expect.any(String));
  expect(res.body?.error?.request_id, what).toEqual(expect.any(String));
}

describe('bad input never yields a 5xx', () => {
  it('random JSON bodies on every write endpoint get a 4xx or a decision', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...WRITES),
        fc.jsonValue({ maxDepth: 4 }),
        async ([method, path], value) => {
          const res = await call(arbiter.url, method, path, { key: KEYS.admin, body: value });
          expect(res.status, `${method} ${path} ${JSON.stringify(value)}`).toBeLessThan(500);
          if (res.status >= 400) expectClientError(res, path);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hostile bodies: invalid UTF-8, huge strings, prototype keys, wrong types, empty body', async () => {
    const bodies = [
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]).toString('latin1'),
      `{"name":"${'x'.repeat(200_000)}"}`,
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"rules":"not a list","name":1}',
      '',
      '[]',
      '{"actor":{"id":"agent-001","type":"ai-agent"},"action":{"capability":"database.query","parameters":{"a":{"__proto__":1}}}}',
    ];
    for (const [method, path] of WRITES) {
      for (const rawBody of bodies) {
        const res = await call(arbiter.url, method, path, {
          key: KEYS.admin,
          rawBody,
          headers: { 'content-type': 'application/json' },
        });
        expectClientError(res, `${method} ${path} ${rawBody.slice(0, 40)}`);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bad query strings on every list endpoint get a 400', async () => {
    for (const path of READS) {
      for (const query of [
        'limit=0',
        'limit=9999',
        'limit=1.5',
        'cursor=AAAA',
        'cursor=',
        'limit=',
        'bogus=1',
        'limit=1&limit=2',
      ]) {
        const res = await call(arbiter.url, 'GET', `${path}?${query}`, { key: KEYS.admin });
        expectClientError(res, `${path}?${query}`);
      }
    }
  });

  it('every endpoint answers 401 without a key and never leaks data', async () => {
    for (const [method, path] of [
      ...WRITES,
      ...READS.map((p) => ['GET', p] as [string, string]),
      ['DELETE', '/api/v1/actors/a/grants/b.c'] as [string, string],
      ['GET', '/api/v1/audit/log/x'] as [string, string],
    ]) {
      const res = await call(
        arbiter.url,
        method,
        path,
        method === 'GET' || method === 'DELETE' ? {} : { body: {} },
      );
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(Object.keys(res.body)).toEqual(['error']);
    }
  });

  it('takes bodies nested 32 levels deep and refuses 33 levels with 400, naming the limit', async () => {
    // context.metadata is free-form: a proposal that nests in it is valid up to the limit.
    const withDepth = (levels: number) => {
      // root (1) > context (2) > metadata (3) > ... : objects 4..levels below it.
      let inner: Record<string, unknown> = {};
      for (let level = levels; level > 3; level--) inner = { a: inner };
      return {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'database.query', parameters: { query: 'q' } },
        context: { metadata: inner },
      };
    };
    const propose = (body: unknown) =>
      call(arbiter.url, 'POST', '/api/v1/governance/propose', { key: KEYS.agent, body });
    const deepest = await propose(withDepth(32));
    expect(deepest.status, JSON.stringify(deepest.body)).toBe(200);
    const tooDeep = await propose(withDepth(33));
    expectClientError(tooDeep, 'depth 33');
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.message).toBe('request body nests deeper than 32 levels');
  });

  it('still serves after all that', async () => {
    const health = await call(arbiter.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    const ready = await call(arbiter.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    const openapi = await call(arbiter.url, 'GET', '/api/v1/openapi.json');
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/governance/propose', '/api/v1/audit/log/{decision_id}']),
    );
  });
});
