import { UpstreamSession, type McpUpstream } from './upstream-session.js';

export interface UpstreamConnectionsOptions {
  timeoutMs: number;
  version: string;
  /** Most connections kept for 2025-11-25 agent sessions; past it the least recently used closes. */
  maxSessions: number;
}

interface Kept {
  connection: UpstreamSession;
  lastUsedMs: number;
}

/**
 * This replica's connections to one upstream: one shared by the stateless (2026-07-28)
 * calls, and one per 2025-11-25 agent session that this replica served, so that an
 * upstream keeping session state sees one session per agent session as before. All are
 * opened on first use, closed when idle (and reopened when used again) and at shutdown.
 */
export class UpstreamConnections {
  private readonly shared: Kept;
  /** By agent session id, least recently used first. */
  private readonly bySession = new Map<string, Kept>();

  constructor(
    readonly upstream: McpUpstream,
    private readonly options: UpstreamConnectionsOptions,
    private readonly clock: () => Date,
  ) {
    this.shared = { connection: this.connect(), lastUsedMs: clock().getTime() };
  }

  /** The connection for a call without an agent session. */
  stateless(): UpstreamSession {
    this.shared.lastUsedMs = this.clock().getTime();
    return this.shared.connection;
  }

  /** The connection of one agent session. */
  forSession(sessionId: string): UpstreamSession {
    const kept = this.bySession.get(sessionId) ?? { connection: this.connect(), lastUsedMs: 0 };
    kept.lastUsedMs = this.clock().getTime();
    this.bySession.delete(sessionId);
    this.bySession.set(sessionId, kept);
    if (this.bySession.size > this.options.maxSessions) {
      const [oldest] = this.bySession.keys();
      void this.endSession(oldest!);
    }
    return kept.connection;
  }

  async endSession(sessionId: string): Promise<void> {
    const kept = this.bySession.get(sessionId);
    this.bySession.delete(sessionId);
    await kept?.connection.close();
  }

  /** Closes what was not used for idleMs; the shared connection reopens on its next use. */
  async closeIdle(idleMs: number): Promise<void> {
    const before = this.clock().getTime() - idleMs;
    const idle = [...this.bySession].filter(([, kept]) => kept.lastUsedMs <= before).map(([id]) => id);
    await Promise.all(idle.map((id) => this.endSession(id)));
    if (this.shared.lastUsedMs <= before) await this.shared.connection.close();
  }

  async close(): Promise<void> {
    const sessions = [...this.bySession.keys()];
    await Promise.all([...sessions.map((id) => this.endSession(id)), this.shared.connection.close()]);
  }

  private connect(): UpstreamSession {
    return new UpstreamSession(this.upstream, this.options.timeoutMs, this.options.version);
  }
}
