import { randomUUID } from 'node:crypto';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/index.js';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError } from '../model/index.js';
import { agentActor } from './agent-actor.js';
import type { AgentSession } from './governed-tool-calls.js';
import type { McpSessions } from './sessions/index.js';

/** The header of a 2025-11-25 session. */
export const SESSION_HEADER = 'mcp-session-id';

/** Session ids Arbiter mints; anything else is no session of ours. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a 2025-11-25 request brings: who sent it, to which server, with which headers and body. */
export interface LegacyRequest {
  principal: Principal;
  server: string;
  sessionId: string | undefined;
  actorHeader: string | undefined;
  body: unknown;
}

/**
 * The 2025-11-25 sessions of the tool proxy, kept in McpSessions so that any replica can
 * serve any of them: an initialize opens one (its id minted here), every later request
 * finds it again and must come from the same credential.
 */
export class LegacySessions {
  constructor(
    private readonly sessions: McpSessions,
    private readonly index: { current(): IndexSnapshot },
    private readonly clock: () => Date,
  ) {}

  /** The agent session a request belongs to, opened now when it is an initialize. */
  async admit(request: LegacyRequest): Promise<AgentSession & { sessionId: string; opened: boolean }> {
    if (request.sessionId === undefined) return { ...(await this.open(request)), opened: true };
    const record = await this.find(request.sessionId, request.server, request.principal);
    return { principal: record.principal, actor: record.actor, sessionId: request.sessionId, opened: false };
  }

  /** DELETE: the agent ends its session. */
  async end(sessionId: string | undefined, server: string, principal: Principal): Promise<void> {
    if (sessionId === undefined)
      throw new ArbiterError('INVALID_REQUEST', 'no Mcp-Session-Id header: there is no session to end');
    await this.find(sessionId, server, principal);
    await this.sessions.end(sessionId);
  }

  /** Forgets a session whose initialize did not succeed. */
  async forget(sessionId: string): Promise<void> {
    await this.sessions.end(sessionId);
  }

  private async open(request: LegacyRequest) {
    if (!isInitializeRequest(request.body)) {
      throw new ArbiterError(
        'INVALID_REQUEST',
        'no Mcp-Session-Id header: send an initialize request first (2025-11-25), or a request of 2026-07-28',
      );
    }
    const actor = agentActor(request.principal, request.actorHeader, this.index.current());
    const sessionId = randomUUID();
    const record = {
      server: request.server,
      principal: request.principal.name,
      actor,
      openedAt: this.clock().toISOString(),
    };
    if (!(await this.sessions.open(sessionId, record)))
      throw new ArbiterError('UNAVAILABLE', 'too many open MCP sessions; close one or try again later');
    return { principal: record.principal, actor, sessionId };
  }

  private async find(sessionId: string, server: string, principal: Principal) {
    const record = SESSION_ID.test(sessionId) ? await this.sessions.use(sessionId) : undefined;
    // 404 tells an MCP client to start a new session.
    if (!record || record.server !== server)
      throw new ArbiterError('NOT_FOUND', `no MCP session ${sessionId}; initialize a new one`);
    if (record.principal !== principal.name)
      throw new ArbiterError('FORBIDDEN', `MCP session ${sessionId} belongs to another credential`);
    return record;
  }
}
