import { cp } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, type NotesServer } from '../../examples/mcp/notes-server.mjs';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import {
  call,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { writeNotesManifestsFor } from '../support/mcp-manifests.js';
import { startNotesServerV1 } from '../support/notes-server-v1.js';

/**
 * Two replicas on one Redis behind a proxy that sends each request to the other replica
 * than the one before, on a new connection: agents of both MCP revisions, to upstreams
 * built with each SDK, never notice that their requests are served by two processes.
 */
let redis: RedisServer;
let upstreams: Record<'v2' | 'v1', NotesServer>;
let manifestsDir: string;
let replicas: ArbiterProcess[] = [];
let balancer: RoundRobin;

/** A round-robin HTTP proxy: request i goes to replica i mod n, each on a new connection. */
interface RoundRobin {
  url: string;
  /** How many requests each replica was sent. */
  served: number[];
  close(): Promise<void>;
}

async function startRoundRobin(targets: ArbiterProcess[]): Promise<RoundRobin> {
  const served = targets.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const index = next++ % targets.length;
    served[index]!++;
    const upstream = request(
      {
        host: '127.0.0.1',
        port: targets[index]!.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

beforeAll(async () => {
  redis = await startRedisServer();
  upstreams = { v2: await startNotesServer(), v1: await startNotesServerV1() };
  manifestsDir = await tempManifests();
  await cp(join(REPO, 'examples/mcp/manifests'), join(manifestsDir, 'mcp'), { recursive: true });
  await writeNotesManifestsFor('notesv1', manifestsDir);
  const args = [
    '--redis',
    `${redis.url}/0`,
    '--mcp-server',
    `notes=${upstreams.v2.url}`,
    '--mcp-server',
    `notesv1=${upstreams.v1.url}`,
  ];
  replicas = await Promise.all([startArbiter({ manifestsDir, args }), startArbiter({ manifestsDir, args })]);
  balancer = await startRoundRobin(replicas);
}, 60_000);

afterAll(async () => {
  await balancer?.close();
  for (const replica of replicas) await replica.stop();
  await upstreams?.v2.close();
  await upstreams?.v1.close();
  await redis?.dispose();
  for (const replica of replicas) await removeDir(replica.dataDir);
  await removeDir(manifestsDir);
});

interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** An agent of one revision: what the tests do with it, whichever SDK it is. */
interface Agent {
  listTools(): Promise<string[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** The context.session_id its calls are recorded with. */
  sessionId: string;
  close(): Promise<void>;
}

const auth = { Authorization: `Bearer ${KEYS.agent}` };

/** SDK v2, pinned to 2026-07-28 (no session); it names a correlation id in each call's _meta. */
async function modernAgent(server: string): Promise<Agent> {
  const client = new ClientV2(
    { name: 'agent-2026', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new TransportV2(new URL(`${balancer.url}/mcp/${server}`), { requestInit: { headers: auth } }),
  );
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  const sessionId = `conversation-${server}-${Date.now()}`;
  return {
    sessionId,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
    callTool: async (name, args) =>
      await client.callTool({
        name,
        arguments: args,
        _meta: { 'dev.arbiter/session_id': sessionId },
      }),
    close: () => client.close(),
  };
}

/** SDK v1: 2025-11-25, with the session Arbiter opens. */
async function legacyAgent(server: string): Promise<Agent & { transport: TransportV1 }> {
  const client = new ClientV1({ name: 'agent-2025', version: '1.0.0' });
  const transport = new TransportV1(new URL(`${balancer.url}/mcp/${server}`), {
    requestInit: { headers: auth },
  });
  await client.connect(transport);
  expect(transport.protocolVersion).toBe('2025-11-25');
  expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  return {
    transport,
    sessionId: transport.sessionId!,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? `[${c.type}]`).join('\n');
const decisionOf = (result: ToolResult) => result._meta?.['dev.arbiter/decision_id'] as string;

async function trail(decisionId: string) {
  const res = await call(replicas[0]!.url, 'GET', `/api/v1/audit/log/${decisionId}`, { key: KEYS.auditor });
  expect(res.status).toBe(200);
  return res.body;
}

const AGENTS = [
  ['2026-07-28 (SDK v2)', modernAgent],
  ['2025-11-25 (SDK v1)', legacyAgent],
] as const;
const UPSTREAMS = [
  ['SDK v2', 'notes', 'v2'],
  ['SDK v1', 'notesv1', 'v1'],
] as const;

describe.each(AGENTS)('an agent speaking %s through two replicas', (_, connect) => {
  describe.each(UPSTREAMS)('to an upstream built with %s', (__, server, kind) => {
    it('lists only granted tools and answers allowed calls, whichever replica serves each request', async () => {
      const agent = await connect(server);
      const upstream = upstreams[kind];
      const servedBefore = [...balancer.served];
      try {
        for (let i = 0; i < 3; i++)
          expect(await agent.listTools()).toEqual(['add_note', 'delete_note', 'list_notes']);
        const before = upstream.calls.length;
        const titles = [1, 2, 3, 4].map((i) => `${agent.sessionId}-${i}`);
        for (const title of titles) {
          const result = await agent.callTool('add_note', { title, text: 'milk' });
          expect(textOf(result), JSON.stringify(result)).toBe(`added "${title}"`);
          expect(result.isError).toBeFalsy();
        }
        expect(upstream.calls.slice(before)).toEqual(
          titles.map((title) => ({ tool: 'add_note', arguments: { title, text: 'milk' } })),
        );
        const recorded = await trail(decisionOf(await agent.callTool('list_notes', {})));
        expect(recorded.request.context).toEqual({ session_id: agent.sessionId });
        expect(recorded.execution.status).toBe('completed');
        // Both replicas served this agent.
        expect(balancer.served.every((n, i) => n - servedBefore[i]! >= 3)).toBe(true);
      } finally {
        await agent.close();
      }
    });

    it('never forwards a denied call, and forwards an escalated one once after approval', async () => {
      const agent = await connect(server);
      const upstream = upstreams[kind];
      try {
        const before = upstream.calls.length;
        const denied = await agent.callTool('add_note', { title: 'private diary', text: 'x' });
        expect(textOf(denied)).toMatch(/^Arbiter denied this call: Denied by policy \S+-guard/);
        expect(textOf(await agent.callTool('purge_notes', {}))).toMatch(/denied.*no grant/i);
        expect(upstream.calls.length).toBe(before);

        const title = `old-${agent.sessionId}`;
        upstream.notes.set(title, 'to delete');
        const waiting = await agent.callTool('delete_note', { title });
        expect(textOf(waiting)).toContain('waits for review (ESCALATE');
        const approved = await call(
          replicas[1]!.url,
          'POST',
          `/api/v1/governance/decisions/${decisionOf(waiting)}/approve`,
          {
            key: KEYS.reviewer,
            body: { comment: 'fine' },
          },
        );
        expect(approved.status).toBe(200);
        expect(upstream.calls.length).toBe(before);
        const forwarded = await agent.callTool('delete_note', { title });
        expect(textOf(forwarded)).toBe(`deleted "${title}"`);
        expect(textOf(await agent.callTool('delete_note', { title }))).toContain('waits for review');
        expect(upstream.calls.slice(before)).toEqual([{ tool: 'delete_note', arguments: { title } }]);
      } finally {
        await agent.close();
      }
    });
  });
});

describe('a 2025-11-25 session across replicas', () => {
  it('is shared by both replicas: ended on one, it is unknown on the other', async () => {
    const agent = await legacyAgent('notes');
    expect(await agent.listTools()).toHaveLength(3);
    await agent.transport.terminateSession();
    // The DELETE went to one replica; both now answer 404 (a new session is needed).
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${balancer.url}/mcp/notes`, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': agent.sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      expect(res.status).toBe(404);
    }
    await agent.close();
  });
});
