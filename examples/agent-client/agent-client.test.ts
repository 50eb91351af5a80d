import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  type ArbiterProcess,
} from '../../test/support/arbiter-process.js';
import { ArbiterClient, type Actor } from './arbiter-client.js';
import { governed } from './governed.js';
import { PLAN, runAgent, type Step } from './main.js';

const AGENT: Actor = { id: 'agent-001', type: 'ai-agent' };
let arbiter: ArbiterProcess;

beforeAll(async () => {
  arbiter = await startArbiter();
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(arbiter.dataDir);
  await removeDir(arbiter.manifestsDir);
});

/** A stand-in for a broken Arbiter (or something else answering on its address). */
async function fakeServer(
  handler: Parameters<typeof createServer>[1],
): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('examples/agent-client against a real Arbiter', () => {
  it('runs the demo plan: acts only on ALLOW and reports the execution', async () => {
    const client = new ArbiterClient({ baseUrl: arbiter.url, apiKey: KEYS.agent, actor: AGENT });
    const ran: Step[] = [];
    const lines: string[] = [];
    const results = await runAgent(
      client,
      PLAN,
      (step) => {
        ran.push(step);
        return Promise.resolve('done');
      },
      (line) => lines.push(line),
    );
    expect(results.map((r) => [r.capability, r.outcome, r.executed])).toEqual([
      ['database.query', 'ALLOW', true],
      ['database.write', 'REQUIRE_CONFIRMATION', false],
      ['payments.transfer', 'DENY', false],
      ['deploy.production', 'ESCALATE', false],
    ]);
    expect(ran.map((s) => s.capability)).toEqual(['database.query']);
    expect(lines[0]).toBe('database.query: ALLOW -> ran: done');

    const decisions = await call(arbiter.url, 'GET', '/api/v1/governance/decisions?limit=10', {
      key: KEYS.admin,
    });
    const allowed = decisions.body.decisions.find((d: { outcome: string }) => d.outcome === 'ALLOW');
    const trail = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${allowed.decision_id}`, {
      key: KEYS.admin,
    });
    expect(trail.body.audit.execution).toMatchObject({
      status: 'completed',
      result_summary: 'database.query completed',
    });
  });

  it('reports a failed action as failed and does not hide the error', async () => {
    const client = new ArbiterClient({ baseUrl: arbiter.url, apiKey: KEYS.agent, actor: AGENT });
    await expect(
      governed(client, 'database.query', { query: 'select 2' }, () => Promise.reject(new Error('db down'))),
    ).rejects.toThrow('db down');
    const decisions = await call(arbiter.url, 'GET', '/api/v1/governance/decisions?limit=1', {
      key: KEYS.admin,
    });
    const trail = await call(
      arbiter.url,
      'GET',
      `/api/v1/governance/decisions/${decisions.body.decisions[0].decision_id}`,
      { key: KEYS.admin },
    );
    expect(trail.body.audit.execution).toMatchObject({ status: 'failed', result_summary: 'db down' });
  });

  it('treats every non-200 answer as DENY and never runs the action', async () => {
    const cases: { client: ArbiterClient; capability: string; status: number }[] = [
      // 401: unknown key
      {
        client: new ArbiterClient({ baseUrl: arbiter.url, apiKey: 'nope-nope-nope', actor: AGENT }),
        capability: 'database.query',
        status: 401,
      },
      // 403: this key may only propose for agent-001
      {
        client: new ArbiterClient({
          baseUrl: arbiter.url,
          apiKey: KEYS.agent,
          actor: { id: 'agent-002', type: 'ai-agent' },
        }),
        capability: 'database.query',
        status: 403,
      },
      // 400: not a capability name
      {
        client: new ArbiterClient({ baseUrl: arbiter.url, apiKey: KEYS.agent, actor: AGENT }),
        capability: 'DROP TABLE',
        status: 400,
      },
    ];
    for (const { client, capability, status } of cases) {
      let ran = false;
      const run = await governed(client, capability, { query: 'select 1' }, () => {
        ran = true;
        return Promise.resolve();
      });
      expect(run.executed).toBe(false);
      expect(ran).toBe(false);
      expect(run.decision).toMatchObject({ outcome: 'DENY', httpStatus: status, decisionId: null });
      expect(run.decision.reason).toContain(`HTTP ${status}`);
    }
  });

  it('treats a 5xx, a 200 without a decision, a timeout and an unreachable server as DENY', async () => {
    const unavailable = await fakeServer((_req, res) =>
      res.writeHead(503).end('{"error":{"code":"UNAVAILABLE","message":"audit down"}}'),
    );
    const junk = await fakeServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"outcome":"YES"}'),
    );
    const silent = await fakeServer(() => undefined);
    const gone = await fakeServer(() => undefined);
    await new Promise((resolve) => gone.server.close(resolve));
    try {
      const expectations: [string, RegExp][] = [
        [unavailable.url, /HTTP 503: UNAVAILABLE audit down/],
        [junk.url, /200 without a decision/],
        [silent.url, /unreachable/],
        [gone.url, /unreachable/],
      ];
      for (const [baseUrl, reason] of expectations) {
        const client = new ArbiterClient({ baseUrl, apiKey: KEYS.agent, actor: AGENT, timeoutMs: 300 });
        const run = await governed(client, 'database.query', { query: 'select 1' }, () =>
          Promise.resolve('ran'),
        );
        expect(run.executed, baseUrl).toBe(false);
        expect(run.decision.outcome).toBe('DENY');
        expect(run.decision.reason).toMatch(reason);
      }
    } finally {
      for (const { server } of [unavailable, junk, silent]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});
