import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  callNotesTool,
  NOTES_TOOLS,
  type NotesServer,
  type NotesState,
} from '../../examples/mcp/notes-server.mjs';

/**
 * The example notes server's tools, served with the MCP SDK v1: protocol revision
 * 2025-11-25 only, with sessions kept in memory (Mcp-Session-Id), as servers built before
 * SDK v2 are. An upstream of the other kind than examples/mcp/notes-server.mjs. Started
 * again on the same port, it has forgotten its sessions, as a restarted server has.
 */
export async function startNotesServerV1(options: { port?: number } = {}): Promise<NotesServer> {
  const state: NotesState = { notes: new Map(), calls: [] };
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('body is not JSON');
        return;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || !isInitializeRequest(body)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such session; initialize first');
        return;
      }
      const opened = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, opened),
      });
      opened.onclose = () => void (opened.sessionId && sessions.delete(opened.sessionId));
      const server = new Server({ name: 'notes-v1', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: NOTES_TOOLS }));
      server.setRequestHandler(CallToolRequestSchema, (request) => callNotesTool(state, request.params));
      await server.connect(opened);
      transport = opened;
    }
    await transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    ...state,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
