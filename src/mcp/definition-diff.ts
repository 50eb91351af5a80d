import type { Tool } from '@modelcontextprotocol/server';
import { canonicalJson } from '../audit/chain.js';
import type { CapabilityObject, CapabilitySpec } from '../model/index.js';
import { capabilitiesForTools } from './capability-manifests.js';
import { toolForCapability } from './tool-capability.js';

/** A manifest field import writes from the tool's definition. */
type DefinitionField = 'description' | 'riskLevel' | 'parameterSchema';
const DEFINITION_FIELDS: readonly DefinitionField[] = ['description', 'riskLevel', 'parameterSchema'];

export interface DefinitionDiff {
  /** Tools the server lists that no capability stands for yet. */
  added: Array<{ tool: string; capability: string; digest: string }>;
  /** Capabilities of the server whose tool it no longer lists. */
  removed: Array<{ tool: string; capability: string; digest: string | undefined }>;
  /** Tools whose definition is not the pinned one (`from` undefined: never pinned). */
  changed: Array<{
    tool: string;
    capability: string;
    from: string | undefined;
    to: string;
    fields: Array<{ field: DefinitionField; before: unknown; after: unknown }>;
  }>;
}

/**
 * What changed between the capabilities written for `server` before (`previous`: any
 * manifests; those of other servers are ignored) and the tools it lists now: what a team
 * reviews before it pins the new definitions by committing them.
 */
export function diffDefinitions(
  server: string,
  previous: readonly CapabilityObject[],
  tools: readonly Tool[],
): DefinitionDiff {
  const before = new Map(
    previous.filter((c) => isOfServer(server, c.spec)).map((c) => [c.spec.name, c.spec] as const),
  );
  const now = capabilitiesForTools(server, tools).manifests.map((m) => m.spec);
  const diff: DefinitionDiff = { added: [], removed: [], changed: [] };
  for (const spec of now) {
    const pin = spec.mcp!;
    const old = before.get(spec.name);
    if (!old) diff.added.push({ tool: pin.tool, capability: spec.name, digest: pin.definitionDigest });
    else if (old.mcp?.definitionDigest !== pin.definitionDigest) {
      diff.changed.push({
        tool: pin.tool,
        capability: spec.name,
        from: old.mcp?.definitionDigest,
        to: pin.definitionDigest,
        fields: changedFields(old, spec),
      });
    }
  }
  const listed = new Set(now.map((spec) => spec.name));
  for (const [name, spec] of before) {
    if (listed.has(name)) continue;
    const tool = spec.mcp?.tool ?? toolForCapability(server, name) ?? name;
    diff.removed.push({ tool, capability: name, digest: spec.mcp?.definitionDigest });
  }
  return diff;
}

/** The diff as text for a reviewer, one line per tool; empty when nothing changed. */
export function formatDefinitionDiff(diff: DefinitionDiff): string {
  const lines: string[] = [];
  for (const { tool, capability, digest } of diff.added)
    lines.push(`new tool ${tool} (${capability}): ${digest}`);
  for (const { tool, capability, digest } of diff.removed)
    lines.push(`removed tool ${tool} (${capability}): ${digest ? `pinned ${digest}` : 'not pinned'}`);
  for (const { tool, capability, from, to, fields } of diff.changed) {
    lines.push(`changed tool ${tool} (${capability}): ${from ? `pinned ${from}` : 'not pinned'}, now ${to}`);
    for (const { field, before, after } of fields)
      lines.push(`  ${field}:`, `    - ${shown(before)}`, `    + ${shown(after)}`);
    if (from && fields.length === 0)
      lines.push('  (in title, outputSchema or annotations beyond the risk level: not held in the manifest)');
  }
  return lines.map((line) => `${line}\n`).join('');
}

/** True when nothing changed: the exit status of --diff is 0 then, else 1. */
export function isUnchanged(diff: DefinitionDiff): boolean {
  return diff.added.length + diff.removed.length + diff.changed.length === 0;
}

function isOfServer(server: string, spec: CapabilitySpec): boolean {
  return spec.mcp ? spec.mcp.server === server : spec.name.startsWith(`mcp.${server}.`);
}

function changedFields(
  old: CapabilitySpec,
  now: CapabilitySpec,
): DefinitionDiff['changed'][number]['fields'] {
  return DEFINITION_FIELDS.filter(
    (field) => canonicalJson(old[field] ?? null) !== canonicalJson(now[field]),
  ).map((field) => ({ field, before: old[field], after: now[field] }));
}

function shown(value: unknown): string {
  return value === undefined ? '(none)' : canonicalJson(value);
}
