import type { ActorType } from '../../model/index.js';

/**
 * A 2025-11-25 agent session (Mcp-Session-Id) as every replica sees it: whoever opened it
 * and for which server. Nothing of the protocol is kept: each request is served by a fresh
 * MCP server instance, so any replica that finds the record can serve the session.
 */
export interface McpSessionRecord {
  /** The upstream's name (`--mcp-server NAME=URL`) the session was opened at. */
  server: string;
  /** The principal that opened it: only the same credential may use it. */
  principal: string;
  /** The actor its calls are proposed for, fixed when it was opened. */
  actor: { id: string; type: ActorType };
  /** When it was opened (RFC 3339). */
  openedAt: string;
}

export interface McpSessionsOptions {
  /** A session unused this long ends. */
  idleMs: number;
  /** Most open sessions; opening one more is refused. */
  maxSessions: number;
}

/**
 * The open 2025-11-25 sessions of the tool proxy: in memory for one process, in Redis
 * (`--redis`) for replicas. A store that cannot answer rejects (ArbiterError UNAVAILABLE):
 * no request is served for a session that cannot be checked.
 */
export interface McpSessions {
  /** Records a new session; false when `maxSessions` are open already. */
  open(id: string, record: McpSessionRecord): Promise<boolean>;
  /** The session, kept open for another idle period; undefined once ended or idle too long. */
  use(id: string): Promise<McpSessionRecord | undefined>;
  end(id: string): Promise<void>;
  close(): Promise<void>;
}
