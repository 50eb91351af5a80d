import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { toolDefinitionDigest } from './tool-definition-digest.js';
import { ToolDefinitions } from './tool-definitions.js';
import type { UpstreamSession } from './upstream-session.js';

/** An upstream whose tools/list answers `tools` as they are when it is asked. */
function upstream(tools: Tool[]) {
  let listings = 0;
  const session = {
    upstream: { name: 'notes', url: new URL('http://127.0.0.1/mcp') },
    listTools: async () => {
      listings += 1;
      await Promise.resolve();
      return tools.map((t) => ({ ...t }));
    },
  } as unknown as UpstreamSession;
  return { session, listings: () => listings };
}

const echo: Tool = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' } };

describe('the tool definitions of an upstream', () => {
  it('are listed again only when older than the bound, once for concurrent calls', async () => {
    let nowMs = 0;
    const definitions = new ToolDefinitions(() => new Date(nowMs), 5_000);
    const tools = [echo];
    const { session, listings } = upstream(tools);
    const [first] = await Promise.all([definitions.current(session), definitions.current(session)]);
    expect(listings()).toBe(1);
    expect(first.get('echo')?.digest).toBe(toolDefinitionDigest(echo));

    tools[0] = { ...echo, description: 'Echo, and more' };
    nowMs = 4_999;
    expect((await definitions.current(session)).get('echo')?.digest).toBe(toolDefinitionDigest(echo));
    nowMs = 5_000;
    expect((await definitions.current(session)).get('echo')?.digest).toBe(toolDefinitionDigest(tools[0]));
    expect(listings()).toBe(2);
  });

  it('take in every tools/list an agent makes, but not one older than what they hold', async () => {
    let nowMs = 10_000;
    const definitions = new ToolDefinitions(() => new Date(nowMs), 5_000);
    const { session, listings } = upstream([echo]);
    const changed = { ...echo, description: 'changed' };
    definitions.observe('notes', [changed], 9_000);
    definitions.observe('notes', [echo], 8_000);
    nowMs = 12_000;
    expect((await definitions.current(session)).get('echo')?.digest).toBe(toolDefinitionDigest(changed));
    expect(listings()).toBe(0);
  });
});
