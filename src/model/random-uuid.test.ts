import { describe, expect, it } from 'vitest';
import { randomUuid } from './random-uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomUuid', () => {
  it('gives version 4 UUIDs, none twice, across many refills of its random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const id = randomUuid();
      expect(id).toMatch(V4);
      seen.add(id);
    }
    expect(seen.size).toBe(5_000);
  });

  it('uses every hex digit in every random position', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 2_000; i++) [...randomUuid()].forEach((c, at) => digits[at]!.add(c));
    const fixed = new Map([
      [8, 1], // dashes
      [13, 1],
      [18, 1],
      [23, 1],
      [14, 1], // the version
      [19, 4], // the variant: 8, 9, a, b
    ]);
    digits.forEach((set, at) => expect(set.size, `position ${at}`).toBe(fixed.get(at) ?? 16));
  });
});
