import type { McpUpstream } from '../mcp/upstream-session.js';
import { SERVER_NAME } from '../mcp/tool-capability.js';
import { UsageError } from './command-line.js';
import { urlOf } from './url-arg.js';

/** `--mcp-*`: the tool proxy's upstream MCP servers. */
export interface McpOptions {
  upstreams: McpUpstream[];
  /** Bound of every request to an upstream, connection included. */
  timeoutMs: number;
}

export interface McpFlags {
  'mcp-server'?: string[];
  'mcp-timeout'?: string;
}

export const MCP_HELP = `Tool proxy (MCP):
  --mcp-server NAME=URL    serve MCP at /mcp/NAME, governing every tools/call to the
                           Streamable HTTP MCP server at URL; repeatable. NAME is
                           lower case ([a-z][a-z0-9_-]*): tools are capabilities
                           mcp.NAME.<tool> (see docs/mcp.md)
  --mcp-timeout S          bound on each upstream call, connection included
                           (default: 30)
`;

const DEFAULT_TIMEOUT_SECONDS = 30;

export function mcpOptions(values: McpFlags): McpOptions | undefined {
  const servers = values['mcp-server'] ?? [];
  if (servers.length === 0) {
    if (values['mcp-timeout'] !== undefined)
      throw new UsageError('--mcp-timeout needs --mcp-server NAME=URL');
    return undefined;
  }
  const upstreams = servers.map(upstreamOf);
  const names = new Set<string>();
  for (const { name } of upstreams) {
    if (names.has(name)) throw new UsageError(`--mcp-server: ${name} is given twice`);
    names.add(name);
  }
  return { upstreams, timeoutMs: timeoutSeconds(values['mcp-timeout']) * 1000 };
}

function upstreamOf(raw: string): McpUpstream {
  const at = raw.indexOf('=');
  const name = raw.slice(0, Math.max(at, 0));
  const url = at > 0 ? urlOf(raw.slice(at + 1)) : undefined;
  if (!SERVER_NAME.test(name))
    throw new UsageError(`--mcp-server: "${raw}" does not start with a NAME of [a-z][a-z0-9_-]* and "="`);
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new UsageError(`--mcp-server: "${raw.slice(at + 1)}" is not an http(s) URL`);
  return { name, url };
}

function timeoutSeconds(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_SECONDS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new UsageError(`--mcp-timeout: ${raw} is not a number of seconds in (0, 3600]`);
  return seconds;
}
