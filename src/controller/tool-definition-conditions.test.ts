import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { capability } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import { ArbiterError } from '../model/index.js';
import type { RawObject } from './resources.js';
import { ToolDefinitionConditions } from './tool-definition-conditions.js';

const pinned = `sha256:${'a'.repeat(64)}`;
const changed = `sha256:${'b'.repeat(64)}`;
const pin = { server: 'tools', tool: 'echo', definitionDigest: pinned };
const indexed = buildIndex([capability('mcp.tools.echo', { mcp: pin })]).capability('mcp.tools.echo')!;
const ready = {
  type: 'Ready',
  status: 'True',
  reason: 'Accepted',
  message: 'ok',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};
const object = (resourceVersion: string, conditions: unknown[]): RawObject => ({
  metadata: { name: indexed.id, generation: 3, resourceVersion },
  status: { conditions },
});

function writer(cached: RawObject, fresh: RawObject, conflicts = 0) {
  const patches: Array<{ conditions: Array<Record<string, unknown>>; resourceVersion: string | undefined }> =
    [];
  let left = conflicts;
  const objects = {
    get: vi.fn(() => Promise.resolve(fresh)),
    patchStatus: vi.fn((_kind: string, _name: string, status: unknown, resourceVersion?: string) => {
      if (left-- > 0) return Promise.reject(new ArbiterError('CONFLICT', 'the object has been modified'));
      patches.push({ ...(status as { conditions: Array<Record<string, unknown>> }), resourceVersion });
      return Promise.resolve(fresh);
    }),
  };
  const conditions = new ToolDefinitionConditions({
    objects,
    cached: () => cached,
    clock: () => new Date('2026-11-29T09:00:00.123Z'),
    logger: pino({ level: 'silent' }),
  });
  return { conditions, objects, patches };
}

describe('ToolDefinitionCurrent on a pinned Capability', () => {
  it('is written beside Ready, onto the copy read, with both digests when the definition changed', async () => {
    const { conditions, patches } = writer(object('7', [ready]), object('7', [ready]));
    conditions.show(indexed, pin, changed);
    await vi.waitFor(() => expect(patches).toHaveLength(1));
    expect(patches[0]).toEqual({
      resourceVersion: '7',
      conditions: [
        ready,
        {
          type: 'ToolDefinitionCurrent',
          status: 'False',
          reason: 'DefinitionChanged',
          message: `MCP server tools lists tool echo with another definition: pinned ${pinned}, now ${changed}; its calls are denied until it is reviewed and pinned again`,
          observedGeneration: 3,
          lastTransitionTime: '2026-11-29T09:00:00Z',
        },
      ],
    });
  });

  it('is read again and written onto the newer copy when the object changed meanwhile', async () => {
    const newer = object('8', [{ ...ready, message: 'newer' }]);
    const { conditions, objects, patches } = writer(object('7', [ready]), newer, 1);
    conditions.show(indexed, pin, pinned);
    await vi.waitFor(() => expect(patches).toHaveLength(1));
    expect(objects.get).toHaveBeenCalledTimes(1);
    expect(patches[0]!.resourceVersion).toBe('8');
    expect(patches[0]!.conditions.map((c) => [c.type, c.status, c.message])).toEqual([
      ['Ready', 'True', 'newer'],
      ['ToolDefinitionCurrent', 'True', `MCP server tools lists tool echo as pinned: ${pinned}`],
    ]);
  });

  it('is not written when the object says it already, nor twice while the informer catches up', async () => {
    const first = writer(object('7', [ready]), object('7', [ready]));
    first.conditions.show(indexed, pin, changed);
    await vi.waitFor(() => expect(first.patches).toHaveLength(1));
    first.conditions.show(indexed, pin, changed);
    const saying = object('9', first.patches[0]!.conditions);
    const second = writer(saying, saying);
    second.conditions.show(indexed, pin, changed);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(first.patches).toHaveLength(1);
    expect(second.objects.patchStatus).not.toHaveBeenCalled();
  });
});
