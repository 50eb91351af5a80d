import { describe, expect, it } from 'vitest';
import { ArbiterError } from '../model/index.js';
import { decodeCursor, encodeCursor, pageByKey, parseLimit } from './paging.js';

describe('paging', () => {
  it('parses limits within 1..200 and rejects the rest', () => {
    expect(parseLimit(undefined)).toBe(50);
    expect(parseLimit('200')).toBe(200);
    for (const bad of ['0', '201', '1.5', '-3', 'x', '', '1e2', ' 5', '0x10', '00001']) {
      expect(() => parseLimit(bad), bad).toThrow(
        new ArbiterError('INVALID_REQUEST', 'invalid query: limit must be a whole number from 1 to 200'),
      );
    }
  });

  it('round-trips cursors and refuses foreign or forged ones', () => {
    const cursor = encodeCursor(42, 'scope-a');
    expect(decodeCursor(cursor, 'scope-a', 'number')).toBe(42);
    expect(() => decodeCursor(cursor, 'scope-b', 'number')).toThrow(/other filters/);
    expect(() => decodeCursor(cursor, 'scope-a', 'string')).toThrow(/not valid/);
    expect(() => decodeCursor('%%%', 'scope-a', 'number')).toThrow(/not valid/);
  });

  it('pages a sorted list by key, every item once', () => {
    const items = ['a', 'b', 'c', 'd', 'e'];
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const { page, next } = pageByKey(items, (s) => s, 2, after);
      seen.push(...page);
      if (next === null) break;
      after = next;
    }
    expect(seen).toEqual(items);
  });
});
