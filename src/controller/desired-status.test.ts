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

  it('keeps lastTransitionTime unless Ready flips', () => {
    const written = desiredStatus('Policy', policy(), accepted, now)!;
    const later = new Date('2025-02-01T00:00:00Z');
    const reworded = desiredStatus('Policy', policy(written), { ...accepted, message: 'fine' }, later)!;
    expect(reworded.conditions[0]!.lastTransitionTime).toBe('2025-01-02T03:04:05Z');
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
