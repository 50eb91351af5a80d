import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { sealEntry, storedText } from '../chain.js';
import { decodeEntry, encodeEntry, entryField, indexKeysOf, storedEntry } from './entry-codec.js';
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
    expect(decodeEntry(encodeEntry(entry).toString('utf8'))).toEqual(entry);
    expect(entryField(['other', 'x', 'entry', 'json'])).toBe('json');
    expect(entryField(['other', 'x'])).toBeUndefined();
  });

  it('reads the entry a stream item holds, and none from an item without one or with text that is no entry', () => {
    expect(storedEntry(['entry', storedText(entry)])).toEqual(entry);
    expect(storedEntry(['other', storedText(entry)])).toBeUndefined();
    expect(storedEntry(['entry', '{"seq":1}'])).toBeUndefined();
  });

  it('stores the bytes of storedText, whether the hash is spliced in or the entry written anew', () => {
    const { hash: _hash, ...content } = entry;
    const sealed = (data: Record<string, unknown>, previous: AuditEntry | null = null) =>
      sealEntry({ ...content, id: 'e2', data }, previous);
    const spliced = sealed({ note: 'zürich \u2028 "quoted" \ud83d\ude00', z: [1, { a: null }] });
    const chained = sealed({ n: 2 }, spliced);
    // Not sealed here (read back), or with a member after `hash` that holds an object.
    const readBack = JSON.parse(storedText(chained)) as AuditEntry;
    const nested = sealEntry({ ...content, policies_evaluated: [{ p: 1 }] as unknown as string[] }, null);
    for (const e of [entry, spliced, chained, readBack, nested]) {
      expect(encodeEntry(e).equals(Buffer.from(storedText(e), 'utf8'))).toBe(true);
    }
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
