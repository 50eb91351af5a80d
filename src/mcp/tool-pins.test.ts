import type { Tool } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { capability } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import { Metrics } from '../metrics/index.js';
import { MemoryOneTimeUses } from '../one-time-uses/index.js';
import { DefinitionChanges } from './definition-changes.js';
import { toolDefinitionDigest } from './tool-definition-digest.js';
import { ToolDefinitions } from './tool-definitions.js';
import { ToolPins } from './tool-pins.js';
import type { UpstreamSession } from './upstream-session.js';

const clock = () => new Date('2026-11-29T09:00:00Z');
const echo: Tool = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' } };
const sum: Tool = { name: 'sum', inputSchema: { type: 'object' } };
const free: Tool = { name: 'free', inputSchema: { type: 'object' } };
const snapshot = buildIndex([
  capability('mcp.tools.echo', {
    mcp: { server: 'tools', tool: 'echo', definitionDigest: toolDefinitionDigest(echo) },
  }),
  capability('mcp.tools.sum', {
    mcp: { server: 'tools', tool: 'sum', definitionDigest: toolDefinitionDigest(sum) },
  }),
  capability('mcp.tools.free'),
]);

function pins() {
  const appended: unknown[] = [];
  const changes = new DefinitionChanges({
    audit: { append: (event) => (appended.push(event), Promise.resolve({} as never)) },
    uses: new MemoryOneTimeUses(clock),
    metrics: new Metrics(),
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { pins: new ToolPins(new ToolDefinitions(clock), changes), appended };
}

const failing = {
  upstream: { name: 'tools', url: new URL('http://127.0.0.1/mcp') },
  listTools: () => Promise.reject(new Error('fetch failed')),
} as unknown as UpstreamSession;

describe('pinned tools on the proxy', () => {
  it('leave out of a tools/list the pinned tools not as pinned, keeping the unpinned ones', async () => {
    const { pins: tools, appended } = pins();
    const changedSum = { ...sum, description: 'now with a description' };
    const admitted = await tools.admitted('tools', [echo, changedSum, free], snapshot);
    expect(admitted.map((t) => t.name)).toEqual(['echo', 'free']);
    expect(appended).toHaveLength(1);
  });

  it('tell the engine nothing of an unpinned tool, and fail closed when the definitions cannot be read', async () => {
    const { pins: tools } = pins();
    expect(await tools.observation(failing, snapshot.capability('mcp.tools.free'), 'free')).toEqual({});
    await expect(tools.observation(failing, snapshot.capability('mcp.tools.echo'), 'echo')).rejects.toThrow(
      'the tools of the upstream MCP server "tools", which pinned tools are checked against, could not be listed: fetch failed',
    );
  });
});
