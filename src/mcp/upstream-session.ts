import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

/** An upstream MCP server Arbiter proxies (`--mcp-server NAME=URL`). */
export interface McpUpstream {
  name: string;
  url: URL;
}

/** Most pages of tools/list read from an upstream, so a looping cursor cannot hang a session. */
const MAX_TOOL_PAGES = 100;

/**
 * One MCP session with an upstream server, on behalf of one agent session: connected on
 * first use, and again after a failed connection. Every request is bounded by timeoutMs,
 * so a slow or silent upstream never hangs the agent.
 */
export class UpstreamSession {
  private connected: Promise<{ client: Client; transport: StreamableHTTPClientTransport }> | undefined;

  constructor(
    readonly upstream: McpUpstream,
    private readonly timeoutMs: number,
    private readonly clientVersion: string,
    /** Sent with every request to the upstream (its own credentials, if it wants any). */
    private readonly requestInit: { headers?: Record<string, string> } = {},
  ) {}

  async listTools(): Promise<Tool[]> {
    const { client } = await this.connection();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : {}, { timeout: this.timeoutMs });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /** Calls a tool; `meta` travels as the request's params._meta. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const { client } = await this.connection();
    const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
    const result = await client.callTool(params, undefined, {
      timeout: this.timeoutMs,
      // A tool reporting progress does not get more time: the bound is the agent's.
      maxTotalTimeout: this.timeoutMs,
    });
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    const connected = this.connected;
    this.connected = undefined;
    if (!connected) return;
    const { client, transport } = await connected.catch(() => ({ client: undefined, transport: undefined }));
    if (!client || !transport) return;
    // Ends the upstream session (DELETE) when the upstream supports it; never waits long.
    await Promise.race([
      transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, Math.min(this.timeoutMs, 1000)).unref()),
    ]);
    await client.close().catch(() => undefined);
  }

  private connection() {
    this.connected ??= this.connect().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  private async connect() {
    const client = new Client({ name: 'arbiter-tool-proxy', version: this.clientVersion });
    const transport = new StreamableHTTPClientTransport(this.upstream.url, { requestInit: this.requestInit });
    try {
      await client.connect(transport, { timeout: this.timeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    return { client, transport };
  }
}
