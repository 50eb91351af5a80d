import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isLegacyRequest,
  legacyStatelessFallback,
  type LegacyHttpHandler,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError } from '../model/index.js';
import { ACTOR_HEADER, agentActor } from './agent-actor.js';
import { authInfoOf, governedServerFactory, type ProxiedRequest } from './governed-mcp-server.js';
import type { GovernedToolCalls } from './governed-tool-calls.js';
import { LegacySessions, SESSION_HEADER } from './legacy-sessions.js';
import type { McpSessions } from './sessions/index.js';
import { UpstreamConnections } from './upstream-connections.js';
import type { McpUpstream } from './upstream-session.js';

export interface ToolProxyOptions {
  upstreams: readonly McpUpstream[];
  /** Bound of every upstream request (--mcp-timeout). */
  timeoutMs: number;
  version: string;
  /** A 2025-11-25 session unused this long ends; an upstream connection unused this long closes. */
  idleMs?: number;
  /** Most open 2025-11-25 sessions (across replicas with Redis); a new one past it is refused with 503. */
  maxSessions?: number;
}

export interface ToolProxyDeps {
  tools: GovernedToolCalls;
  index: { current(): IndexSnapshot };
  /** The open 2025-11-25 sessions: in memory, or in Redis for replicas. close() closes it. */
  sessions: McpSessions;
  logger: Logger;
  clock: () => Date;
}

/** One upstream as this replica serves it. */
interface ServedUpstream {
  connections: UpstreamConnections;
  /** 2026-07-28: a fresh MCP server per request, nothing kept between requests. */
  modern: McpHttpHandler;
  /** 2025-11-25: the same, once LegacySessions has found the session. */
  legacy: LegacyHttpHandler;
}

export const DEFAULT_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_SESSIONS = 10_000;

/**
 * The tool proxy: MCP (Streamable HTTP) at /mcp/<server> for each upstream server, to
 * clients of both revisions. 2026-07-28 requests are stateless; 2025-11-25 sessions live
 * in McpSessions, not in this process. So any replica serves any request: each is served
 * by a fresh MCP server (the SDK's) whose every tools/call GovernedToolCalls governs.
 */
export class ToolProxy {
  private readonly upstreams: ReadonlyMap<string, ServedUpstream>;
  private readonly legacySessions: LegacySessions;
  private readonly idleMs: number;
  private readonly sweeper: NodeJS.Timeout;
  /** Tool calls being decided or forwarded: close() waits for them to be recorded. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly deps: ToolProxyDeps,
    options: ToolProxyOptions,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.legacySessions = new LegacySessions(deps.sessions, deps.index, deps.clock);
    const onerror = (err: Error) => deps.logger.debug({ err }, 'MCP request rejected');
    const serving = { tools: deps.tools, version: options.version, track: this.track };
    this.upstreams = new Map(
      options.upstreams.map((upstream) => {
        const factory = governedServerFactory(upstream.name, serving);
        const connections = new UpstreamConnections(
          upstream,
          { ...options, maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS },
          deps.clock,
        );
        const served: ServedUpstream = {
          connections,
          modern: createMcpHandler(factory, { legacy: 'reject', onerror }),
          legacy: legacyStatelessFallback(factory, onerror),
        };
        return [upstream.name, served];
      }),
    );
    this.sweeper = setInterval(() => void this.closeIdle(), Math.min(this.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** Mounted at /mcp behind `authenticate` (the governance:propose scope). */
  router(authenticate: RequestHandler, jsonBody: RequestHandler): Router {
    const router = express.Router();
    // No GET: Arbiter sends nothing unasked, so there is no event stream to open (405).
    router.post('/:server', authenticate, jsonBody, this.handle);
    router.delete('/:server', authenticate, this.end);
    return router;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.inFlight]);
    for (const served of this.upstreams.values()) {
      await served.modern.close();
      await served.connections.close();
    }
    await this.deps.sessions.close();
  }

  private readonly handle = async (req: Request, res: Response): Promise<void> => {
    const [name, served] = this.served(req);
    const probe = await toWebRequest(req, req.body);
    if (await isLegacyRequest(probe, req.body)) {
      await this.serveLegacy(name, served, req, res);
      return;
    }
    const principal = req.principal!;
    const actorHeader = req.get(ACTOR_HEADER);
    // Resolved by the request's MCP handlers, which tell the agent what is wrong in MCP terms.
    const agent = () => ({
      principal: principal.name,
      actor: agentActor(principal, actorHeader, this.deps.index.current()),
    });
    const proxied: ProxiedRequest = { agent, upstream: served.connections.stateless() };
    await toNodeHandler(served.modern)(Object.assign(req, { auth: authInfoOf(proxied) }), res, req.body);
  };

  /** A 2025-11-25 request: its session is found (or opened) wherever it was opened. */
  private async serveLegacy(name: string, served: ServedUpstream, req: Request, res: Response) {
    const { opened, ...agent } = await this.legacySessions.admit({
      principal: req.principal!,
      server: name,
      sessionId: req.get(SESSION_HEADER),
      actorHeader: req.get(ACTOR_HEADER),
      body: req.body,
    });
    const { sessionId } = agent;
    if (opened) {
      this.deps.logger.info(
        { session_id: sessionId, server: name, actor_id: agent.actor.id, principal: agent.principal },
        'MCP session opened',
      );
    }
    const proxied: ProxiedRequest = {
      agent: () => agent,
      upstream: served.connections.forSession(sessionId),
    };
    const serve = toNodeHandler({
      fetch: async (request) => {
        const response = await served.legacy(request, {
          authInfo: authInfoOf(proxied),
          parsedBody: req.body,
        });
        if (opened && !response.ok) await this.legacySessions.forget(sessionId);
        const headers = new Headers(response.headers);
        headers.set(SESSION_HEADER, sessionId);
        return new Response(response.body, {
          status: response.status,
          statusText: response.statusText,
          headers,
        });
      },
    });
    await serve(req, res, req.body);
  }

  /** DELETE: a 2025-11-25 agent ends its session, on whichever replica. */
  private readonly end = async (req: Request, res: Response): Promise<void> => {
    const [name, served] = this.served(req);
    const sessionId = req.get(SESSION_HEADER);
    await this.legacySessions.end(sessionId, name, req.principal!);
    await served.connections.endSession(sessionId!);
    this.deps.logger.info({ session_id: sessionId, server: name }, 'MCP session ended');
    res.status(200).end();
  };

  private served(req: Request): [string, ServedUpstream] {
    if (this.closing)
      throw new ArbiterError('UNAVAILABLE', 'shutting down: send MCP requests to another replica');
    const name = String(req.params.server);
    const served = this.upstreams.get(name);
    if (!served) {
      const known = [...this.upstreams.keys()].join(', ') || 'none';
      throw new ArbiterError('NOT_FOUND', `no MCP server "${name}" (configured: ${known})`);
    }
    return [name, served];
  }

  private readonly track = <T>(call: Promise<T>): Promise<T> => {
    this.inFlight.add(call);
    void call.finally(() => this.inFlight.delete(call)).catch(() => undefined);
    return call;
  };

  private async closeIdle(): Promise<void> {
    for (const served of this.upstreams.values()) await served.connections.closeIdle(this.idleMs);
  }
}
