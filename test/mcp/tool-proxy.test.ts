import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { startNotesServer, type NotesServer } from '../../examples/mcp/notes-server.mjs';
import { writeNotesManifestsFor } from '../support/mcp-manifests.js';
import { startNotesServerV1 } from '../support/notes-server-v1.js';
import {
  call,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

// The agent: the MCP SDK's own client (v2), speaking either revision, through Arbiter to the
// example notes server.
let notes: NotesServer;
/** The same tools from a server built with the SDK v1: 2025-11-25 sessions only. */
let notesV1: NotesServer;
let silent: Server;
const silentSockets = new Set<Socket>();
let arbiter: ArbiterProcess;
let manifestsDir: string;

/** A server that accepts connections and never answers: the slow upstream. */
async function startSilentServer(): Promise<Server> {
  const server = createServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A port nothing listens on: the upstream that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** list_notes behind two broken upstreams, granted to agent-001. */
const BROKEN_UPSTREAMS = ['gone', 'slow']
  .map(
    (server) => `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata: {name: mcp-${server}-list-notes}
spec: {name: mcp.${server}.list_notes, riskLevel: low, parameterSchema: {type: object}}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: agent-001-${server}}
spec:
  actor: {id: agent-001, type: ai-agent}
  grants: [{capability: mcp.${server}.list_notes}]
`,
  )
  .join('---\n');

/**
 * agent-typed is an AI agent (its first typed ActorGrant says so) that also holds grants
 * as automation: those are not its grants when it calls as an agent.
 */
const TYPED_GRANTS = `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: agent-typed-1-as-agent}
spec:
  actor: {id: agent-typed, type: ai-agent}
  grants: [{capability: mcp.notes.list_notes}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: agent-typed-2-as-automation}
spec:
  actor: {id: agent-typed, type: automation}
  grants: [{capability: mcp.notes.list_notes}, {capability: mcp.notes.purge_notes}]
`;

beforeAll(async () => {
  notes = await startNotesServer();
  notesV1 = await startNotesServerV1();
  silent = await startSilentServer();
  manifestsDir = await mkdtemp(join(tmpdir(), 'arbiter-mcp-manifests-'));
  await cp(join(REPO, 'examples/mcp/manifests'), manifestsDir, { recursive: true });
  await writeFile(join(manifestsDir, 'broken-upstreams.yaml'), BROKEN_UPSTREAMS);
  await writeFile(join(manifestsDir, 'typed-grants.yaml'), TYPED_GRANTS);
  await writeNotesManifestsFor('notesv1', manifestsDir);
  // After importing, the team marked a note's text sensitive, and the title of a note to
  // delete (an approved retry must then match on a keyed fingerprint).
  const imported = join(manifestsDir, 'capabilities.yaml');
  const docs = parseAllDocuments(await readFile(imported, 'utf8')).map((d) => d.toJS());
  const mark = (capability: string, property: string) => {
    const doc = docs.find((d) => d.spec.name === capability);
    doc.spec.parameterSchema.properties[property]['x-arbiter-sensitive'] = true;
  };
  mark('mcp.notes.add_note', 'text');
  mark('mcp.notes.delete_note', 'title');
  await writeFile(imported, docs.map((d) => stringify(d)).join('---\n'));
  arbiter = await startArbiter({
    manifestsDir,
    args: [
      '--mcp-server',
      `notes=${notes.url}`,
      '--mcp-server',
      `gone=http://127.0.0.1:${await closedPort()}/mcp`,
      '--mcp-server',
      `slow=http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`,
      '--mcp-server',
      `notesv1=${notesV1.url}`,
      '--mcp-timeout',
      '1',
    ],
  });
}, 30_000);

afterAll(async () => {
  await arbiter?.stop();
  await notes?.close();
  await notesV1?.close();
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
  await removeDir(manifestsDir);
  if (arbiter) await removeDir(arbiter.dataDir);
});

/** The protocol revisions an agent may speak: both are served at /mcp/<server>. */
const REVISIONS = ['2026-07-28', '2025-11-25'] as const;
type Revision = (typeof REVISIONS)[number];

/** The correlation a 2026-07-28 agent names in its calls' _meta (it has no session). */
const CONVERSATION = 'conversation-42';

interface AgentSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** What its calls are recorded with as context.session_id. */
  sessionId: string | undefined;
  callTool(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

async function agentSession(
  server = 'notes',
  key: string = KEYS.agent,
  headers: Record<string, string> = {},
  revision: Revision = '2025-11-25',
): Promise<AgentSession> {
  const modern = revision === '2026-07-28';
  // Pinned to the revision: a proxy that did not serve it would fail here.
  const client = new Client(
    { name: 'test-agent', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: revision } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${arbiter.url}/mcp/${server}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe(revision);
  const meta = modern ? { _meta: { 'dev.arbiter/session_id': CONVERSATION } } : {};
  return {
    client,
    transport,
    sessionId: modern ? CONVERSATION : transport.sessionId,
    callTool: (name, args = {}) => client.callTool({ name, arguments: args, ...meta }),
  };
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return client.callTool({ name, arguments: args });
}

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
const decisionOf = (result: CallToolResult) => result._meta?.['dev.arbiter/decision_id'] as string;

async function trail(decisionId: string) {
  const res = await call(arbiter.url, 'GET', `/api/v1/audit/log/${decisionId}`, { key: KEYS.auditor });
  expect(res.status).toBe(200);
  return res.body;
}

describe.each(REVISIONS)('the MCP tool proxy, to an agent speaking %s', (revision) => {
  it("lists only the tools the agent's actor is granted", async () => {
    const agent = await agentSession('notes', KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const { tools } = await client.listTools();
      // purge_notes is registered but not granted to agent-001.
      expect(tools.map((t) => t.name).sort()).toEqual(['add_note', 'delete_note', 'list_notes']);
      expect(tools.find((t) => t.name === 'add_note')?.inputSchema.required).toEqual(['title', 'text']);
    } finally {
      await client.close();
    }
  });

  it('leaves out a tool the actor holds only through a grant for another actor type', async () => {
    const agent = await agentSession('notes', KEYS.admin, { 'X-Arbiter-Actor': 'agent-typed' }, revision);
    const { client } = agent;
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['list_notes']);
      // The list and the decision agree: called by name, it is refused for that reason.
      const before = notes.calls.length;
      const purge = await agent.callTool('purge_notes');
      expect(purge.isError).toBe(true);
      expect(textOf(purge)).toContain(
        'Actor agent-typed holds a grant for mcp.notes.purge_notes only as type automation, not as ai-agent (decision ',
      );
      expect(notes.calls.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('forwards an allowed call and records the decision and the execution it measured', async () => {
    const agent = await agentSession('notes', KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const before = notes.calls.length;
      const result = await agent.callTool('add_note', { title: 'groceries', text: 'milk' });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe('added "groceries"');
      // The upstream's identity stays between it and Arbiter.
      const serverInfo = result._meta?.['io.modelcontextprotocol/serverInfo'] as
        { name?: string } | undefined;
      expect(serverInfo?.name).not.toBe('notes');
      expect(notes.calls.slice(before)).toEqual([
        { tool: 'add_note', arguments: { title: 'groceries', text: 'milk' } },
      ]);
      const body = await trail(decisionOf(result));
      // The upstream got the real text; the log keeps it masked.
      expect(body.request).toMatchObject({
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: {
          capability: 'mcp.notes.add_note',
          parameters: {
            title: 'groceries',
            text: { masked: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) },
          },
        },
        context: { session_id: agent.sessionId },
      });
      const exported = await call(arbiter.url, 'GET', '/api/v1/audit/export', { key: KEYS.auditor });
      expect(exported.body).toContain('groceries');
      expect(exported.body).not.toContain('milk');
      expect(body.decision.outcome).toBe('ALLOW');
      expect(body.execution).toMatchObject({ status: 'completed', result_summary: 'added "groceries"' });
      expect(body.execution.duration_ms).toEqual(expect.any(Number));
      const decision = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${decisionOf(result)}`, {
        key: KEYS.reviewer,
      });
      expect(decision.body.audit).toMatchObject({
        source: 'mcp',
        principal: 'agent-001',
        mcp: { server: 'notes', tool: 'add_note', session_id: agent.sessionId },
      });
    } finally {
      await client.close();
    }
  });

  it('never forwards a denied call: a tool error with the reason and the decision', async () => {
    const agent = await agentSession('notes', KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const before = notes.calls.length;
      const denied = await agent.callTool('add_note', { title: 'private diary', text: 'x' });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toMatch(
        /^Arbiter denied this call: Denied by policy notes-guard \(rule 1, priority 100\) \(decision [0-9a-f-]{36}\)$/,
      );
      // Not granted, and hidden from the list: still refused when called by name.
      const ungranted = await agent.callTool('purge_notes');
      expect(textOf(ungranted)).toMatch(/denied.*no grant/i);
      expect(notes.calls.length).toBe(before);
      expect((await trail(decisionOf(denied))).execution).toBeNull();
    } finally {
      await client.close();
    }
  });

  it('forwards an escalated call once, when the same call comes again after approval', async () => {
    // A note of its own: the same call of the other revision would match this approval.
    const title = `old-${revision}`;
    notes.notes.set(title, 'to delete');
    const agent = await agentSession('notes', KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const before = notes.calls.length;
      const waiting = await agent.callTool('delete_note', { title });
      expect(waiting.isError).toBe(true);
      const id = decisionOf(waiting);
      expect(textOf(waiting)).toMatch(
        new RegExp(
          `^This call waits for review \\(ESCALATE: Escalated for review by policy notes-guard \\(rule 0, priority 100\\); decision ${id}\\)\\. Once a reviewer`,
        ),
      );
      // Recorded masked; the retry below still matches it (a keyed fingerprint).
      expect((await trail(id)).request.action.parameters.title).toEqual({
        masked: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/),
      });
      // Another call (other arguments) is not covered by the approval to come.
      const approval = await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${id}/approve`, {
        key: KEYS.reviewer,
        body: { comment: 'old note, fine' },
      });
      expect(approval.status).toBe(200);
      expect(approval.body.confirmation_token).toBeUndefined();
      expect(textOf(await agent.callTool('delete_note', { title: 'other' }))).toContain('waits for review');
      expect(notes.calls.length).toBe(before);
      const forwarded = await agent.callTool('delete_note', { title });
      expect(textOf(forwarded)).toBe(`deleted "${title}"`);
      expect(notes.calls.slice(before)).toEqual([{ tool: 'delete_note', arguments: { title } }]);
      const used = await trail(decisionOf(forwarded));
      expect(used.decision.reason).toContain(`approved by reviewer (decision ${id})`);
      expect(used.execution.status).toBe('completed');
      // Once: the next identical call waits for a review of its own.
      expect(textOf(await agent.callTool('delete_note', { title }))).toContain('waits for review');
      expect(notes.calls.length).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('records an upstream error result as a failed execution', async () => {
    const agent = await agentSession('notes', KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const before = notes.calls.length;
      const waiting = await agent.callTool('delete_note', { title: `never-was-${revision}` });
      await call(arbiter.url, 'POST', `/api/v1/governance/decisions/${decisionOf(waiting)}/approve`, {
        key: KEYS.reviewer,
        body: {},
      });
      const result = await agent.callTool('delete_note', { title: `never-was-${revision}` });
      expect(result.isError).toBe(true);
      expect(notes.calls.length).toBe(before + 1);
      expect((await trail(decisionOf(result))).execution).toMatchObject({
        status: 'failed',
        // The upstream echoed the (sensitive) title: the summary keeps it out.
        result_summary: 'no note "[masked]"',
      });
    } finally {
      await client.close();
    }
  });

  it.each([
    ['gone', /failed: .*fetch failed \(ECONNREFUSED\)/],
    ['slow', /failed: .*timed out/i],
  ])('answers a clear tool error and records failed when the upstream is %s', async (server, message) => {
    const agent = await agentSession(server, KEYS.agent, {}, revision);
    const { client } = agent;
    try {
      const result = await agent.callTool('list_notes');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^the upstream MCP server "${server}" ${message.source}`));
      const { execution } = await trail(decisionOf(result));
      expect(execution.status).toBe('failed');
      expect(execution.result_summary).toMatch(message);
      // Its tool list cannot be read either: an MCP error, not a hang.
      await expect(client.listTools()).rejects.toThrow(new RegExp(`upstream MCP server "${server}" failed`));
    } finally {
      await client.close();
    }
  });
});

describe('the MCP tool proxy', () => {
  it.each(REVISIONS)(
    'keeps forwarding when a 2025-11-25 upstream restarts and forgets its sessions (%s)',
    async (revision) => {
      const agent = await agentSession('notesv1', KEYS.agent, {}, revision);
      try {
        expect((await agent.callTool('list_notes')).isError).toBeFalsy();
        await notesV1.close();
        notesV1 = await startNotesServerV1({ port: notesV1.port });
        const results = [];
        for (let i = 0; i < 3; i++) results.push(await agent.callTool('list_notes'));
        // At most the call on the connection the restart cut fails; the proxy then opens
        // a new upstream session (Arbiter's own session with the agent is not affected).
        expect(results.slice(1).map(textOf)).toEqual(['no notes', 'no notes']);
        expect(notesV1.calls.length).toBeGreaterThanOrEqual(2);
      } finally {
        await agent.client.close();
      }
    },
  );

  it('opens no session without a valid credential, and keeps a session to its own', async () => {
    await expect(agentSession('notes', 'not-a-key')).rejects.toThrow(/UNAUTHENTICATED|\(HTTP 401\)/);
    const bare = await fetch(`${arbiter.url}/mcp/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    // Another credential cannot use the agent's session.
    const { client, transport } = await agentSession();
    try {
      const stolen = await fetch(`${arbiter.url}/mcp/notes`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEYS.admin}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      expect(stolen.status).toBe(403);
    } finally {
      await client.close();
    }
  });

  it.each(REVISIONS)(
    'asks a credential that may act for any actor to name one, and checks it (%s)',
    async (revision) => {
      await expect(agentSession('notes', 'not-a-key', {}, revision)).rejects.toThrow(
        /UNAUTHENTICATED|\(HTTP 401\)/,
      );
      // The admin key is bound to no actor. A 2025-11-25 session is refused at initialize
      // (400); a 2026-07-28 request, by the MCP error of the call.
      for (const [key, headers, message] of [
        [KEYS.admin, {}, /X-Arbiter-Actor/],
        [KEYS.agent, { 'X-Arbiter-Actor': 'agent-002' }, /may not act for actor agent-002/],
      ] as const) {
        const connecting = agentSession('notes', key, headers, revision);
        if (revision === '2025-11-25') {
          await expect(connecting).rejects.toThrow(message);
          continue;
        }
        const { client } = await connecting;
        await expect(client.listTools()).rejects.toThrow(message);
        await client.close();
      }
      const { client } = await agentSession(
        'notes',
        KEYS.admin,
        { 'X-Arbiter-Actor': 'agent-001' },
        revision,
      );
      try {
        expect((await client.listTools()).tools).toHaveLength(3);
      } finally {
        await client.close();
      }
    },
  );

  it('records a stateless call without a correlation with no session, and refuses a malformed one', async () => {
    const client = new Client(
      { name: 'test-agent', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${arbiter.url}/mcp/notes`), {
        requestInit: { headers: { Authorization: `Bearer ${KEYS.agent}` } },
      }),
    );
    try {
      const plain = await client.callTool({ name: 'list_notes', arguments: {} });
      expect(plain.isError).toBeFalsy();
      const body = await trail(decisionOf(plain));
      expect(body.request.context).toBeUndefined();
      const decision = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${decisionOf(plain)}`, {
        key: KEYS.reviewer,
      });
      expect(decision.body.audit.mcp).toEqual({
        server: 'notes',
        tool: 'list_notes',
        fingerprint: expect.any(String),
        // The example manifests pin their tools.
        definition_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      const before = notes.calls.length;
      for (const value of [42, '', 'x'.repeat(257)]) {
        await expect(
          client.callTool({ name: 'list_notes', arguments: {}, _meta: { 'dev.arbiter/session_id': value } }),
        ).rejects.toThrow('_meta["dev.arbiter/session_id"] must be a string of 1 to 256 characters');
      }
      expect(notes.calls.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('answers 404 with the configured names for an unknown server', async () => {
    const res = await call(arbiter.url, 'POST', '/mcp/unknown', { key: KEYS.agent, body: {} });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe('no MCP server "unknown" (configured: notes, gone, slow, notesv1)');
  });

  // Last: it stops the server the other tests share.
  it('ends open sessions on SIGTERM: the server exits 0 without waiting out its grace', async () => {
    const { client } = await agentSession();
    await callTool(client, 'list_notes');
    // The SDK client holds a GET event stream open; --shutdown-grace is the default 10 s.
    const exit = arbiter.stop();
    const graceOver = new Promise((resolve) => setTimeout(() => resolve('grace over'), 9_000));
    expect(await Promise.race([exit, graceOver])).toBe(0);
    await client.close();
  }, 20_000);
});
