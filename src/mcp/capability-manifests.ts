import type { Tool } from '@modelcontextprotocol/server';
import type { CapabilityObject, RiskLevel } from '../model/index.js';
import { capabilityObjectName } from '../sources/object-names.js';
import { capabilityForTool } from './tool-capability.js';
import { toolDefinitionDigest } from './tool-definition-digest.js';

export interface ImportedCapabilities {
  manifests: CapabilityObject[];
  /** Tools left out, with why (a name too long for a capability). */
  skipped: Array<{ tool: string; reason: string }>;
}

/**
 * Capability manifests for an MCP server's tools, for a team to review and commit: the
 * capability mcp.<server>.<tool>, the tool's description, its inputSchema as the
 * parameter schema, a risk level from its annotations, and the pin of the definition that
 * was reviewed (spec.mcp). Annotations are hints from the server, not guarantees, which is
 * why a person reviews the result.
 */
export function capabilitiesForTools(server: string, tools: readonly Tool[]): ImportedCapabilities {
  const manifests: CapabilityObject[] = [];
  const skipped: ImportedCapabilities['skipped'] = [];
  for (const tool of tools) {
    const capability = capabilityForTool(server, tool.name);
    if (!capability) {
      skipped.push({ tool: tool.name, reason: 'its capability name would be longer than 128 characters' });
      continue;
    }
    const { $schema: _dialect, ...parameterSchema } = tool.inputSchema as Record<string, unknown>;
    manifests.push({
      apiVersion: 'governance.arbiter.dev/v1alpha1',
      kind: 'Capability',
      metadata: { name: capabilityObjectName(capability) },
      spec: {
        name: capability,
        description: describe(tool),
        riskLevel: riskOf(tool),
        parameterSchema,
        mcp: { server, tool: tool.name, definitionDigest: toolDefinitionDigest(tool) },
      },
    });
  }
  return { manifests, skipped };
}

/** readOnlyHint -> low, destructiveHint -> high, anything else -> medium. */
export function riskOf(tool: Pick<Tool, 'annotations'>): RiskLevel {
  if (tool.annotations?.readOnlyHint === true) return 'low';
  // MCP's default for destructiveHint is true, but only for tools that are not read-only
  // and say nothing: an unannotated tool is "medium", for a person to decide.
  if (tool.annotations?.destructiveHint === true) return 'high';
  return 'medium';
}

function describe(tool: Tool): string {
  const text = tool.description ?? tool.annotations?.title ?? tool.title ?? `MCP tool ${tool.name}`;
  return text.length > 1000 ? `${text.slice(0, 999)}…` : text;
}
