import { canonicalDigest } from './canonical-digest.js';

/** The members of a tool, as tools/list gives them, that make its definition. */
export const DIGESTED_MEMBERS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const;

/** A tool as an upstream lists it: the digested members, and whatever else it sends. */
export interface ListedTool {
  name: string;
  [member: string]: unknown;
}

/**
 * What a tool's pin holds: "sha256:" and the hex SHA-256 of the RFC 8785 JSON of the tool's
 * name, title, description, inputSchema, outputSchema and annotations as the upstream lists
 * them, absent members left out. _meta, icons and the like are not part of what a reviewer
 * approved, so they may change without a new review.
 */
export function toolDefinitionDigest(tool: ListedTool): string {
  return canonicalDigest(toolDefinition(tool));
}

/** The digested members of a tool: what mcp.tool.changed records as the new definition. */
export function toolDefinition(tool: ListedTool): Record<string, unknown> {
  const definition: Record<string, unknown> = {};
  for (const member of DIGESTED_MEMBERS) if (tool[member] !== undefined) definition[member] = tool[member];
  return definition;
}
