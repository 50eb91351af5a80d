import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/server';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

// The MCP peers of the pinning tests, in one place: the agent's client and an upstream
// whose tools change. Both are the v1 SDK (protocol 2025-11-25) today; moving them to
// another SDK or revision changes only this file.

export const ECHO: Tool = {
  name: 'echo',
  description: 'Echo the text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: true },
};
export const SUM: Omit<Tool, 'name'> = {
  description: 'Add two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
};

/** An upstream MCP server whose tools a test changes while it runs (a "rug pull"). */
export interface ChangingUpstream {
  url: string;
  /** Every tools/call it received, in order. */
  calls: Array<{ tool: string; arguments: Record<string, unknown> }>;
  /** How many tools/list requests it answered. */
  listings: () => number;
  tool(name: string): Tool;
  change(name: string, patch: Partial<Tool>): void;
  remove(name: string): void;
  add(tool: Tool): void;
  close(): Promise<void>;
}

/** Starts an upstream with the tools echo and sum, stateless: every request stands alone. */
export async function startChangingUpstream(): Promise<ChangingUpstream> {
  const tools = new Map<string, Tool>([
    ['echo', structuredClone(ECHO)],
    ['sum', { name: 'sum', ...structuredClone(SUM) }],
  ]);
  const calls: ChangingUpstream['calls'] = [];
  let listings = 0;
  const mcpServer = () => {
    const server = new Server({ name: 'changing', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      listings += 1;
      return { tools: [...tools.values()] };
    });
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const args = request.params.arguments ?? {};
      calls.push({ tool: request.params.name, arguments: args });
      return { content: [{ type: 'text', text: `${request.params.name}: ${JSON.stringify(args)}` }] };
    });
    return server;
  };
  const http = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined;
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await mcpServer().connect(transport);
      res.on('close', () => void transport.close());
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const named = (name: string) => {
    const tool = tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool;
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    listings: () => listings,
    tool: named,
    change: (name, patch) => void tools.set(name, { ...named(name), ...patch }),
    remove: (name) => void tools.delete(name),
    add: (tool) => void tools.set(tool.name, tool),
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** An agent's MCP session through Arbiter at `url` (…/mcp/<server>), signed in with `key`. */
export async function agentClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
