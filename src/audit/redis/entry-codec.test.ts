import { describe, expect, it } from 'vitest';
import { sealEntry } from '../chain.js';
import { decodeEntry, encodeEntry, entryField, indexKeysOf } from './entry-codec.js';
import { RedisAuditKeys, streamId } from './redis-keys.js';

const entry = sealEntry(
  {
    id: 'e1',
    event_type: 'policy.updated',
    timestamp: '2025-01-01T00:00:00.000Z',
    actor_id: 'admin',
    capability: null,
    outcome: null,
    risk_score: null,
    decision_id: null,
    policies_evaluated: [],
    policy_matched: null,
    data: { name: 'p' },
  },
  null,
);

describe('Redis entry codec and key layout', () => {
  it('round-trips an entry through its stream field', () => {
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
    expect(entryField(['other', 'x', 'entry', 'json'])).toBe('json');
    expect(entryField(['other', 'x'])).toBeUndefined();
  });

  it('names what is wrong with a stored item instead of throwing', () => {
    expect(decodeEntry('{not json')).toMatchObject({ invalid: expect.stringMatching(/not valid JSON/) });
    expect(decodeEntry('{"seq": 0}')).toMatchObject({ invalid: expect.stringMatching(/seq/) });
  });

  it('indexes only the non-null filter fields, all under the hash-tagged prefix', () => {
    const keys = new RedisAuditKeys();
    expect(indexKeysOf(keys, entry)).toEqual([
      'arbiter:{audit}:idx:actor_id:admin',
      'arbiter:{audit}:idx:event_type:policy.updated',
    ]);
    expect(keys.stream).toBe('arbiter:{audit}:stream');
    expect(streamId(42)).toBe('42-0');
  });
});
