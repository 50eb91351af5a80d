import { describe, expect, it } from 'vitest';
import { INDEXED_FIELDS, RedisAuditKeys } from './redis-keys.js';

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

  it('keeps the keys of two key layouts apart', () => {
    const a = new RedisAuditKeys('a:{audit}');
    const b = new RedisAuditKeys('b:{audit}');
    expect(a.index('actor_id', 'agent-1')).toBe('a:{audit}:idx:actor_id:agent-1');
    expect(b.index('actor_id', 'agent-1')).toBe('b:{audit}:idx:actor_id:agent-1');
  });
});
