import { describe, expect, it } from 'vitest';
import { INDEXED_FIELDS, RedisAuditKeys, TREE_CHUNK_RECORDS } from './redis-keys.js';

describe('RedisAuditKeys.index', () => {
  it('names every field and value under the prefix, the same key each time, past the kept bound too', () => {
    const keys = new RedisAuditKeys('p:{audit}');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10_050; i++) {
        for (const field of INDEXED_FIELDS) {
          expect(keys.index(field, `v${i}`)).toBe(`p:{audit}:idx:${field}:v${i}`);
        }
      }
    }
  });

  it('keeps the names of up to 10,000 values per field for reuse, then starts over', () => {
    const keys = new RedisAuditKeys();
    for (let i = 0; i < 10_000; i++) keys.index('actor_id', `agent-${i}`);
    keys.index('actor_id', 'agent-0'); // named again: nothing is dropped
    keys.index('decision_id', 'dec-1'); // never recurs: not kept
    expect(keys.keptIndexKeys).toBe(10_000);
    keys.index('actor_id', 'agent-10000');
    expect(keys.keptIndexKeys).toBe(1);
  });

  it('keeps the keys of two key layouts apart', () => {
    const a = new RedisAuditKeys('a:{audit}');
    const b = new RedisAuditKeys('b:{audit}');
    expect(a.index('actor_id', 'agent-1')).toBe('a:{audit}:idx:actor_id:agent-1');
    expect(b.index('actor_id', 'agent-1')).toBe('b:{audit}:idx:actor_id:agent-1');
  });
});

describe('RedisAuditKeys layout', () => {
  it('names every key of a log apart, under its prefix (so in one Cluster slot)', () => {
    const keys = new RedisAuditKeys('p:{audit}');
    const named = [
      keys.stream,
      keys.head,
      keys.ids,
      keys.time,
      keys.timeFloor,
      keys.timeCeiling,
      keys.scratch,
      keys.index('actor_id', 'a'),
      keys.index('decision_id', 'a'),
      keys.treeChunk(0),
      keys.treeChunk(1),
      keys.cancelled('b'),
    ];
    for (const key of named) expect(key.startsWith('p:{audit}:'), key).toBe(true);
    expect(new Set(named).size).toBe(named.length);
  });

  it('lays tree records 32 bytes apart, TREE_CHUNK_RECORDS to a key, each key from offset 0', () => {
    const keys = new RedisAuditKeys();
    const N = TREE_CHUNK_RECORDS;
    expect(keys.treeRecord(0)).toEqual({ key: keys.treeChunk(0), offset: 0 });
    expect(keys.treeRecord(N)).toEqual({ key: keys.treeChunk(1), offset: 0 });
    for (const p of [0, 1, N - 2, N - 1, N, 3 * N - 1]) {
      const [here, next] = [keys.treeRecord(p), keys.treeRecord(p + 1)];
      if (next.key === here.key) expect(next.offset, `record ${p + 1}`).toBe(here.offset + 32);
      else expect([here.offset, next.offset], `record ${p + 1}`).toEqual([(N - 1) * 32, 0]);
    }
  });
});
