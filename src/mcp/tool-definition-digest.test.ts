import canonicalizeModule from 'canonicalize';
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DIGESTED_MEMBERS, toolDefinitionDigest } from './tool-definition-digest.js';

// The reference implementation of RFC 8785, independent of ours.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

describe('the definition digest of an MCP tool', () => {
  it('is SHA-256 of the RFC 8785 JSON of the digested members: a fixed vector', () => {
    // The canonical text was written by hand and hashed with `printf %s TEXT | sha256sum`.
    const tool = {
      title: 'Add note',
      name: 'add_note',
      inputSchema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      description: 'Adds a note – «title» ✓',
      annotations: { readOnlyHint: false },
      // Not part of the definition: left out.
      _meta: { 'example.com/x': 1 },
      icons: [{ src: 'https://example.com/i.png' }],
      execution: { taskSupport: 'optional' },
    };
    expect(toolDefinitionDigest(tool)).toBe(
      'sha256:43221dbae489fa18dcf5e384eed5686cf276a65c147f493818acd08ffa5a6e09',
    );
  });

  it('agrees with the canonicalize package for any definition', () => {
    const member = fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          title: member,
          description: member,
          inputSchema: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
          outputSchema: member,
          annotations: member,
          other: member,
        }),
        (tool) => {
          const picked = Object.fromEntries(
            DIGESTED_MEMBERS.filter((m) => tool[m] !== undefined).map((m) => [m, tool[m]]),
          );
          const expected = `sha256:${hash('sha256', canonicalize(picked)!, 'hex')}`;
          expect(toolDefinitionDigest(tool)).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('changes with any digested member, and not with others', () => {
    const tool = { name: 't', description: 'd', inputSchema: { type: 'object' } };
    const digest = toolDefinitionDigest(tool);
    expect(toolDefinitionDigest({ ...tool, description: 'd.' })).not.toBe(digest);
    expect(toolDefinitionDigest({ ...tool, outputSchema: { type: 'object' } })).not.toBe(digest);
    expect(toolDefinitionDigest({ ...tool, _meta: { x: 1 } })).toBe(digest);
    expect(toolDefinitionDigest({ ...tool, title: undefined })).toBe(digest);
  });
});
