import type { McpSessionRecord, McpSessions, McpSessionsOptions } from './mcp-sessions.js';

/** One process (embedded): the sessions are kept in memory. */
export class MemoryMcpSessions implements McpSessions {
  /** Each open session and when (ms since the epoch) it ends unless used. */
  private readonly sessions = new Map<string, { record: McpSessionRecord; endsAtMs: number }>();

  constructor(
    private readonly options: McpSessionsOptions,
    private readonly clock: () => Date,
  ) {}

  open(id: string, record: McpSessionRecord): Promise<boolean> {
    const now = this.clock().getTime();
    // Ended sessions go first, so that only open ones count.
    for (const [key, session] of this.sessions) if (session.endsAtMs <= now) this.sessions.delete(key);
    if (this.sessions.size >= this.options.maxSessions) return Promise.resolve(false);
    this.sessions.set(id, { record, endsAtMs: now + this.options.idleMs });
    return Promise.resolve(true);
  }

  use(id: string): Promise<McpSessionRecord | undefined> {
    const now = this.clock().getTime();
    const session = this.sessions.get(id);
    if (!session || session.endsAtMs <= now) return Promise.resolve(undefined);
    session.endsAtMs = now + this.options.idleMs;
    return Promise.resolve(session.record);
  }

  end(id: string): Promise<void> {
    this.sessions.delete(id);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
