import {
  Client,
  ProtocolError,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/client';

/** An upstream MCP server Arbiter proxies (`--mcp-server NAME=URL`). */
export interface McpUpstream {
  name: string;
  url: URL;
}

/** Most pages of tools/list read from an upstream, so a looping cursor cannot hang a call. */
const MAX_TOOL_PAGES = 100;

/**
 * A connection to an upstream MCP server of either revision: the SDK's client probes for
 * 2026-07-28 and falls back to a 2025-11-25 session. Connected on first use, and again
 * after a failed connection or close(). Every request is bounded by timeoutMs, so a slow
 * or silent upstream never hangs the agent.
 */
type Connection = Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;

export class UpstreamSession {
  private connected: Connection | undefined;

  constructor(
    readonly upstream: McpUpstream,
    private readonly timeoutMs: number,
    private readonly clientVersion: string,
    /** Sent with every request to the upstream (its own credentials, if it wants any). */
    private readonly requestInit: { headers?: Record<string, string> } = {},
  ) {}

  async listTools(): Promise<Tool[]> {
    // Every page, read again each time: what the upstream lists now.
    const listed = await this.use((client) =>
      client.listTools(undefined, { timeout: this.timeoutMs, cacheMode: 'refresh' }),
    );
    return listed.tools;
  }

  /** Calls a tool; `meta` travels as the request's params._meta. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<CallToolResult> {
    return this.use((client) =>
      client.callTool(
        { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
        // A tool reporting progress does not get more time: the bound is the agent's.
        { timeout: this.timeoutMs, maxTotalTimeout: this.timeoutMs },
      ),
    );
  }

  close(): Promise<void> {
    return this.drop(this.connected);
  }

  /**
   * Runs one request. A failure that is not the upstream's own answer drops the connection,
   * so that the next request connects again; an upstream that forgot its session (it
   * restarted: 404) did not run the request, which is sent once more on a new session.
   */
  private async use<T>(request: (client: Client) => Promise<T>): Promise<T> {
    const connected = this.connection();
    const { client } = await connected;
    try {
      return await request(client);
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      // Not waited for: ending the old session must not delay the answer.
      void this.drop(connected);
      if (!(err instanceof SdkHttpError && err.status === 404)) throw err;
      return request((await this.connection()).client);
    }
  }

  /** Closes `connected` if it is still the connection in use. */
  private async drop(connected: Connection | undefined): Promise<void> {
    if (!connected || connected !== this.connected) return;
    this.connected = undefined;
    const { client, transport } = await connected.catch(() => ({ client: undefined, transport: undefined }));
    if (!client || !transport) return;
    // Ends a 2025-11-25 upstream session (DELETE) when there is one; never waits long.
    if (transport.sessionId !== undefined) {
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, Math.min(this.timeoutMs, 1000)).unref()),
      ]);
    }
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
    const client = new Client(
      { name: 'arbiter-tool-proxy', version: this.clientVersion },
      { versionNegotiation: { mode: 'auto' }, listMaxPages: MAX_TOOL_PAGES },
    );
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
