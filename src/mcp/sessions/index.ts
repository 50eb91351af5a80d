export type { McpSessionRecord, McpSessions, McpSessionsOptions } from './mcp-sessions.js';
export { MemoryMcpSessions } from './memory-mcp-sessions.js';
export { RedisMcpSessions, type RedisMcpSessionsOptions } from './redis-mcp-sessions.js';
