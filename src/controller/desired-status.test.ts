import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../model/index.js';
import { desiredStatus } from './desired-status.js';
import type { RawObject } from './resources.js';

const now = new Date('2025-01-02T03:04:05.678Z');
const accepted: ObjectStatus = { ready: true, reason: 'Accepted', message: 'ok', observedGeneration: 2 };
const policy = (status?: unknown): RawObject => ({
  metadata: { name: 'p', generation: 2 },
  spec: { rules: [{}, {}] },
  ...(status ? { status: status as Record<string, unknown> } : {}),
});

describe('desiredStatus', () => {
  it('writes observedGeneration, the Ready condition and the rule count', () => {
    expect(desiredStatus('Policy', policy(), accepted, now)).toEqual({
      observedGeneration: 2,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Accepted',
          message: 'ok',
          observedGeneration: 2,
          lastTransitionTime: '2025-01-02T03:04:05Z',
        },
      ],
      ruleCount: 2,
    });
  });

  it('asks for no write when the object already says it (no hot loop)', () => {
    const written = desiredStatus('Policy', policy(), accepted, now)!;
    expect(desiredStatus('Policy', policy(written), accepted, new Date())).toBeUndefined();
  });

  it('keeps the conditions other writers own', () => {
    const foreign = {
      type: 'Reviewed',
      status: 'True',
      reason: 'Approved',
      message: 'set by another controller',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };
    const written = desiredStatus('Policy', policy({ conditions: [foreign] }), accepted, now)!;
    expect(written.conditions.map((c) => c.type)).toEqual(['Ready', 'Reviewed']);
    expect(written.conditions[1]).toEqual(foreign);
    expect(desiredStatus('Policy', policy(written), accepted, now)).toBeUndefined();
  });

  it('drops ToolDefinitionCurrent from a Capability that no longer pins a tool, and keeps it while it does', () => {
    const changed = {
      type: 'ToolDefinitionCurrent',
      status: 'False',
      reason: 'DefinitionChanged',
      message: 'pinned sha256:a, now sha256:b',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };
    const capability = (spec: Record<string, unknown>): RawObject => ({
      metadata: { name: 'mcp-notes-add-note', generation: 2 },
      spec: { name: 'mcp.notes.add_note', riskLevel: 'low', ...spec },
      status: { conditions: [changed] },
    });
    const pin = { server: 'notes', tool: 'add_note', definitionDigest: `sha256:${'a'.repeat(64)}` };
    const pinned = desiredStatus('Capability', capability({ mcp: pin }), accepted, now)!;
    expect(pinned.conditions.map((c) => c.type)).toEqual(['Ready', 'ToolDefinitionCurrent']);
    const unpinned = desiredStatus('Capability', capability({}), accepted, now)!;
    expect(unpinned.conditions.map((c) => c.type)).toEqual(['Ready']);
  });

  it('keeps lastTransitionTime unless Ready flips', () => {
    const written = desiredStatus('Policy', policy(), accepted, now)!;
    const later = new Date('2025-02-01T00:00:00Z');
    const reworded = desiredStatus('Policy', policy(written), { ...accepted, message: 'fine' }, later)!;
    expect(reworded.conditions[0].lastTransitionTime).toBe('2025-01-02T03:04:05Z');
    const rejected: ObjectStatus = {
      ready: false,
      reason: 'InvalidCondition',
      message: 'rule 0',
      observedGeneration: 2,
    };
    const flipped = desiredStatus('Policy', policy(written), rejected, later)!;
    expect(flipped.conditions[0]).toMatchObject({
      status: 'False',
      lastTransitionTime: '2025-02-01T00:00:00Z',
    });
  });
});

describe('desiredStatus: OutsideDelegation', () => {
  const inTeamA = (status?: unknown): RawObject => ({
    metadata: { name: 'p', namespace: 'team-a', generation: 2 },
    spec: { rules: [{}] },
    ...(status ? { status: status as Record<string, unknown> } : {}),
  });
  const outside: ObjectStatus = {
    ...accepted,
    outsideDelegation: 'Delegation team-a does not let ... db.drop',
  };

  it('is True with the message on a namespaced object in use that names undelegated capabilities', () => {
    const desired = desiredStatus('NamespacedPolicy', inTeamA(), outside, now)!;
    expect(desired.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'True', 'Accepted'],
      ['OutsideDelegation', 'True', 'OutsideDelegation'],
    ]);
    expect(desired.conditions[1]?.message).toContain('db.drop');
    expect(desired.ruleCount).toBe(1);
  });

  it('turns False when all is delegated, and goes when the object is not in use', () => {
    const written = desiredStatus('NamespacedPolicy', inTeamA(), outside, now)!;
    const within = desiredStatus('NamespacedPolicy', inTeamA(written), accepted, now)!;
    expect(within.conditions[1]).toMatchObject({
      type: 'OutsideDelegation',
      status: 'False',
      reason: 'WithinDelegation',
    });
    const rejected: ObjectStatus = { ready: false, reason: 'ForeignSubject', message: 'binds x' };
    const out = desiredStatus('NamespacedActorGrant', inTeamA(written), rejected, now)!;
    expect(out.conditions.map((c) => c.type)).toEqual(['Ready']);
  });

  it('is never written on the cluster kinds', () => {
    expect(desiredStatus('Policy', policy(), outside, now)!.conditions.map((c) => c.type)).toEqual(['Ready']);
  });
});
