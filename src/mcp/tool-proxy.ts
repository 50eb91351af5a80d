import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError } from '../model/index.js';
import { ACTOR_HEADER, agentActor } from './agent-actor.js';
import { failureText } from './failure-text.js';
import type { AgentSession, GovernedToolCalls } from './governed-tool-calls.js';
import { UpstreamSession, type McpUpstream } from './upstream-session.js';

export interface ToolProxyOptions {
  upstreams: readonly McpUpstream[];
  /** Bound of every upstream request (--mcp-timeout). */
  timeoutMs: number;
  version: string;
  /** A session unused this long is closed (and its upstream session with it). */
  idleMs?: number;
  /** Most open sessions; a new one past it is refused with 503. */
  maxSessions?: number;
}

export interface ToolProxyDeps {
  tools: GovernedToolCalls;
  index: { current(): IndexSnapshot };
  logger: Logger;
  clock: () => Date;
}

interface ProxySession {
  agent: AgentSession;
  transport: StreamableHTTPServerTransport;
  upstream: UpstreamSession;
  lastUsedMs: number;
}

const DEFAULT_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_SESSIONS = 10_000;
const SESSION_HEADER = 'mcp-session-id';

/**
 * The tool proxy: MCP (Streamable HTTP) at /mcp/<server> for each upstream server. An agent
 * opens a session with its API credential; every tools/call in it is governed by
 * GovernedToolCalls, and its tools/list shows only what the agent may call.
 */
export class ToolProxy {
  private readonly upstreams: ReadonlyMap<string, McpUpstream>;
  private readonly sessions = new Map<string, ProxySession>();
  private readonly sweeper: NodeJS.Timeout;
  /** Tool calls being decided or forwarded: close() waits for them to be recorded. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: ToolProxyDeps,
    private readonly options: ToolProxyOptions,
  ) {
    this.upstreams = new Map(options.upstreams.map((u) => [u.name, u]));
    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.sweeper = setInterval(() => this.closeIdle(idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  /** Mounted at /mcp behind `authenticate` (the governance:propose scope). */
  router(authenticate: RequestHandler, jsonBody: RequestHandler): Router {
    const router = express.Router();
    router.post('/:server', authenticate, jsonBody, this.handle);
    router.get('/:server', authenticate, this.handle);
    router.delete('/:server', authenticate, this.handle);
    return router;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const calls = [...this.inFlight];
    await Promise.all([...this.sessions.values()].map((session) => session.transport.close()));
    await Promise.allSettled(calls);
  }

  private readonly handle = async (req: Request, res: Response): Promise<void> => {
    const name = String(req.params.server);
    const upstream = this.upstreams.get(name);
    if (!upstream) {
      const known = [...this.upstreams.keys()].join(', ') || 'none';
      throw new ArbiterError('NOT_FOUND', `no MCP server "${name}" (configured: ${known})`);
    }
    const sessionId = req.get(SESSION_HEADER);
    if (sessionId === undefined) {
      await this.open(upstream, req, res);
      return;
    }
    const session = this.sessions.get(sessionId);
    if (!session || session.upstream.upstream.name !== upstream.name) {
      // 404 tells an MCP client to start a new session.
      res
        .status(404)
        .json(jsonRpcError(ErrorCode.InvalidRequest, `no MCP session ${sessionId}; initialize a new one`));
      return;
    }
    if (session.agent.principal !== req.principal!.name) {
      throw new ArbiterError('FORBIDDEN', `MCP session ${sessionId} belongs to another credential`);
    }
    session.lastUsedMs = this.deps.clock().getTime();
    await session.transport.handleRequest(req, res, req.body);
  };

  /** A request without a session: it must be an initialize, which opens one. */
  private async open(upstream: McpUpstream, req: Request, res: Response): Promise<void> {
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      throw new ArbiterError('INVALID_REQUEST', 'no Mcp-Session-Id header: send an initialize request first');
    }
    if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS)) {
      throw new ArbiterError('UNAVAILABLE', 'too many open MCP sessions; close one or try again later');
    }
    const actor = agentActor(req.principal!, req.get(ACTOR_HEADER), this.deps.index.current());
    const sessionId = randomUUID();
    const session: ProxySession = {
      agent: { principal: req.principal!.name, actor, sessionId },
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => sessionId,
        onsessioninitialized: (id) => {
          this.sessions.set(id, session);
        },
      }),
      upstream: new UpstreamSession(upstream, this.options.timeoutMs, this.options.version),
      lastUsedMs: this.deps.clock().getTime(),
    };
    session.transport.onclose = () => {
      this.sessions.delete(sessionId);
      void session.upstream.close();
    };
    await this.mcpServerFor(session).connect(session.transport);
    this.deps.logger.info(
      {
        session_id: sessionId,
        server: upstream.name,
        actor_id: actor.id,
        principal: session.agent.principal,
      },
      'MCP session opened',
    );
    await session.transport.handleRequest(req, res, req.body);
  }

  /** The MCP server one agent session talks to: tools only, each call governed. */
  private mcpServerFor(session: ProxySession): Server {
    const server = new Server(
      { name: `arbiter-tool-proxy/${session.upstream.upstream.name}`, version: this.options.version },
      { capabilities: { tools: {} } },
    );
    const { tools } = this.deps;
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      try {
        return { tools: await tools.list(session.agent, session.upstream) };
      } catch (err) {
        throw upstreamError(session.upstream.upstream.name, err);
      }
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args } = request.params;
      const call = tools.call(session.agent, session.upstream, name, args ?? {});
      this.inFlight.add(call);
      try {
        return await call;
      } catch (err) {
        // GovernedToolCalls turns upstream failures into tool errors; what is left is ours.
        throw new McpError(
          ErrorCode.InternalError,
          `Arbiter could not decide this call, so it was not forwarded: ${(err as Error).message}`,
        );
      } finally {
        this.inFlight.delete(call);
      }
    });
    return server;
  }

  private closeIdle(idleMs: number): void {
    const now = this.deps.clock().getTime();
    for (const [id, session] of this.sessions) {
      if (now - session.lastUsedMs < idleMs) continue;
      this.deps.logger.info({ session_id: id }, 'MCP session closed after being idle');
      void session.transport.close();
    }
  }
}

function upstreamError(server: string, err: unknown): McpError {
  return new McpError(
    ErrorCode.InternalError,
    `the upstream MCP server "${server}" failed: ${failureText(err)}`,
  );
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
