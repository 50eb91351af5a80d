import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../model/index.js';
import { desiredStatus, type ObjectStatusBody } from './desired-status.js';
import type { RawObject } from './resources.js';
import { statusWarnings } from './status-warnings.js';

const now = new Date('2025-01-02T03:04:05Z');
const grantIn = (generation: number, status?: ObjectStatusBody): RawObject => ({
  metadata: { name: 'bot', namespace: 'team-a', generation },
  spec: { grants: [{}] },
  ...(status ? { status: status as unknown as Record<string, unknown> } : {}),
});
const accepted: ObjectStatus = { ready: true, reason: 'Accepted', message: 'ok' };
const outside = (what: string): ObjectStatus => ({
  ...accepted,
  outsideDelegation: `Delegation team-a does not let namespace team-a govern: ${what}`,
});
const foreign: ObjectStatus = { ready: false, reason: 'ForeignSubject', message: 'binds User alice' };

/** The warnings of moving the object from `before` (never written when undefined) to `after`. */
function warnings(before: ObjectStatus | undefined, after: ObjectStatus, generations = [1, 1]) {
  const [first = 1, second = 1] = generations;
  const written = before && desiredStatus('NamespacedActorGrant', grantIn(first), before, now);
  const raw = grantIn(second, written);
  const desired = desiredStatus('NamespacedActorGrant', raw, after, now);
  return desired ? statusWarnings(raw, desired) : [];
}

describe('statusWarnings', () => {
  it('warns once when an object is rejected, again only at a new generation or reason', () => {
    expect(warnings(undefined, foreign)).toEqual([{ reason: 'ForeignSubject', message: 'binds User alice' }]);
    expect(warnings(foreign, foreign)).toEqual([]);
    expect(warnings(foreign, { ...foreign, message: 'binds User bob' })).toEqual([]);
    expect(warnings(foreign, foreign, [1, 2])).toHaveLength(1);
    expect(warnings(accepted, foreign)).toHaveLength(1);
  });

  it('warns when a namespaced object starts naming capabilities outside its Delegation, or others', () => {
    expect(warnings(undefined, outside('db.drop'))).toEqual([
      {
        reason: 'OutsideDelegation',
        message: 'Delegation team-a does not let namespace team-a govern: db.drop',
      },
    ]);
    expect(warnings(accepted, outside('db.drop'))).toHaveLength(1);
    expect(warnings(outside('db.drop'), outside('db.drop'))).toEqual([]);
    expect(warnings(outside('db.drop'), outside('db.drop, files.read'))).toHaveLength(1);
    expect(warnings(outside('db.drop'), outside('db.drop'), [1, 2])).toHaveLength(1);
  });

  it('says nothing of an object in use within its Delegation, nor of one coming back into it', () => {
    expect(warnings(undefined, accepted)).toEqual([]);
    expect(warnings(outside('db.drop'), accepted)).toEqual([]);
    expect(warnings(foreign, accepted)).toEqual([]);
  });
});
