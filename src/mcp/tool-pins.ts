import type { Tool } from '@modelcontextprotocol/server';
import { definitionChanged } from '../engine/index.js';
import type { IndexedCapability, IndexSnapshot } from '../index/index.js';
import type { Observations } from '../model/index.js';
import type { DefinitionChanges } from './definition-changes.js';
import { failureText } from './failure-text.js';
import { capabilityForTool } from './tool-capability.js';
import type { ToolDefinitions } from './tool-definitions.js';
import type { UpstreamSession } from './upstream-session.js';

/**
 * Pinned tool definitions on the proxy's two paths: a tools/list leaves out the tools whose
 * definition is not the pinned one, and a call hands the engine the definition digest its
 * upstream lists now, which denies it when it is not the pinned one. Both report what they
 * see to DefinitionChanges. A capability without a pin is not looked at.
 */
export class ToolPins {
  constructor(
    private readonly definitions: ToolDefinitions,
    private readonly changes: DefinitionChanges,
  ) {}

  /** The tools of a tools/list that have no pin or are as pinned. */
  async admitted(server: string, tools: readonly Tool[], snapshot: IndexSnapshot): Promise<Tool[]> {
    const listed = this.definitions.observe(server, tools);
    const admitted: Tool[] = [];
    for (const tool of tools) {
      const name = capabilityForTool(server, tool.name);
      const capability = name ? snapshot.capability(name) : undefined;
      const pin = capability?.spec.mcp;
      const definition = listed.get(tool.name)!;
      if (capability && pin) {
        await this.changes.observe(capability, definition);
        if (definitionChanged(pin, definition.digest)) continue;
      }
      admitted.push(tool);
    }
    return admitted;
  }

  /** What the engine is told of a call's tool: its current digest, when its capability is pinned. */
  async observation(
    upstream: UpstreamSession,
    capability: IndexedCapability | undefined,
    tool: string,
  ): Promise<Observations> {
    if (!capability?.spec.mcp) return {};
    let definitions;
    try {
      definitions = await this.definitions.current(upstream);
    } catch (err) {
      // Unchecked, the call is not decided, and not forwarded.
      const server = upstream.upstream.name;
      throw new Error(
        `the tools of the upstream MCP server "${server}", which pinned tools are checked against, could not be listed: ${failureText(err)}`,
        { cause: err },
      );
    }
    const listed = definitions.get(tool);
    await this.changes.observe(capability, listed);
    return { toolDefinitionDigest: listed?.digest ?? null };
  }
}
