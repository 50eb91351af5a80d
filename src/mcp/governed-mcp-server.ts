import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { ArbiterError } from '../model/index.js';
import { failureText } from './failure-text.js';
import type { AgentSession, GovernedToolCalls } from './governed-tool-calls.js';
import { sessionCorrelation } from './session-correlation.js';
import type { UpstreamSession } from './upstream-session.js';

/** One request to the tool proxy, as Arbiter authenticated and routed it. */
export interface ProxiedRequest {
  /** The agent behind it; throws an ArbiterError when the credential may not act as the named actor. */
  agent: () => AgentSession;
  upstream: UpstreamSession;
}

/** Where a ProxiedRequest rides from the express route to the SDK's server factory. */
const PROXIED = 'dev.arbiter/proxied';

/** The SDK's pass-through authInfo carrying one request's agent and upstream. */
export function authInfoOf(proxied: ProxiedRequest) {
  return { token: '', clientId: '', scopes: [], extra: { [PROXIED]: proxied } };
}

export interface GovernedMcpServerDeps {
  tools: GovernedToolCalls;
  version: string;
  /** Tool calls being decided or forwarded: shutdown waits for them. */
  track<T>(call: Promise<T>): Promise<T>;
}

/**
 * The SDK's server factory for one upstream: for each request (of either revision) a fresh
 * MCP server with tools only, whose every tools/call is governed by GovernedToolCalls.
 */
export function governedServerFactory(server: string, deps: GovernedMcpServerDeps) {
  return (context: McpRequestContext): Server => {
    const proxied = context.authInfo?.extra?.[PROXIED] as ProxiedRequest | undefined;
    // Arbiter's route always sets it: a request without it did not pass authentication.
    if (!proxied) throw new Error('a request reached the MCP server without passing Arbiter');
    return governedMcpServer(server, proxied, deps);
  };
}

function governedMcpServer(name: string, proxied: ProxiedRequest, deps: GovernedMcpServerDeps): Server {
  const { upstream } = proxied;
  const server = new Server(
    { name: `arbiter-tool-proxy/${name}`, version: deps.version },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler('tools/list', async () => {
    const agent = agentOf(proxied);
    try {
      return { tools: await deps.tools.list(agent, upstream) };
    } catch (err) {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `the upstream MCP server "${name}" failed: ${failureText(err)}`,
      );
    }
  });
  server.setRequestHandler('tools/call', async (request) => {
    const agent = agentOf(proxied);
    const { name: tool, arguments: args, _meta } = request.params;
    const correlation = sessionCorrelation(_meta);
    if (correlation instanceof Error)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, correlation.message);
    // A 2025-11-25 session names itself; a stateless call may name its conversation.
    const caller =
      agent.sessionId === undefined && correlation ? { ...agent, sessionId: correlation } : agent;
    try {
      return await deps.track(deps.tools.call(caller, upstream, tool, args ?? {}));
    } catch (err) {
      // GovernedToolCalls turns upstream failures into tool errors; what is left is ours.
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Arbiter could not decide this call, so it was not forwarded: ${(err as Error).message}`,
      );
    }
  });
  return server;
}

/** The request's agent; a credential that may not act as it is told so in an MCP error. */
function agentOf(proxied: ProxiedRequest): AgentSession {
  try {
    return proxied.agent();
  } catch (err) {
    if (err instanceof ArbiterError) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, err.message);
    throw err;
  }
}
