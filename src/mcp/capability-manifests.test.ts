import { describe, expect, it } from 'vitest';
import { buildIndex } from '../index/index.js';
import { capabilitiesForTools, riskOf } from './capability-manifests.js';
import { toolDefinitionDigest } from './tool-definition-digest.js';

describe('capabilities for MCP tools', () => {
  it('take their risk from the annotations: read-only low, destructive high, else medium', () => {
    expect(riskOf({ annotations: { readOnlyHint: true, destructiveHint: true } })).toBe('low');
    expect(riskOf({ annotations: { destructiveHint: true } })).toBe('high');
    expect(riskOf({ annotations: { readOnlyHint: false, destructiveHint: false } })).toBe('medium');
    expect(riskOf({})).toBe('medium');
  });

  it('load as valid objects, pinned, without the schema dialect, and skip what has no capability', () => {
    const readFile = {
      name: 'readFile',
      title: 'Read a file',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object' as const,
        properties: { path: { type: 'string' } },
      },
    };
    const { manifests, skipped } = capabilitiesForTools('files', [
      readFile,
      { name: 'x'.repeat(200), inputSchema: { type: 'object' } },
    ]);
    expect(skipped).toEqual([
      { tool: 'x'.repeat(200), reason: 'its capability name would be longer than 128 characters' },
    ]);
    expect(manifests[0]?.spec).toEqual({
      name: 'mcp.files.read-file',
      description: 'Read a file',
      riskLevel: 'medium',
      parameterSchema: { type: 'object', properties: { path: { type: 'string' } } },
      // The digest is of the definition as listed, the dialect included.
      mcp: { server: 'files', tool: 'readFile', definitionDigest: toolDefinitionDigest(readFile) },
    });
    const index = buildIndex(manifests);
    expect(index.capability('mcp.files.read-file')).toBeDefined();
    expect(index.statuses().map((s) => s.status.ready)).toEqual([true]);
  });
});
