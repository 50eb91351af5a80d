import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyShapeProblem } from './json-body.js';

/** The order the problems are found in, as a plain stack walk finds them. */
function referenceProblem(root: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > 32) return 'request body nests deeper than 32 levels';
    for (const key of Object.keys(value)) {
      if (['__proto__', 'constructor', 'prototype'].includes(key)) {
        return `request body contains the forbidden key "${key}"`;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
  return undefined;
}

/** Nested objects and lists, some of them deeper than the limit, some with a forbidden key. */
const hostile = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'constructor', 'prototype', '__proto__'), tie('value'), {
      maxKeys: 3,
    }),
    fc.tuple(fc.integer({ min: 30, max: 34 }), tie('value')).map(([depth, inner]) => {
      let nested: unknown = inner;
      for (let i = 0; i < depth; i++) nested = { n: nested };
      return nested;
    }),
  ),
})).value;

describe('bodyShapeProblem', () => {
  it('names the same problem first as a stack walk of the parsed body', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const parsed: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
        expect(bodyShapeProblem(parsed)).toBe(referenceProblem(parsed));
      }),
      { numRuns: 2_000 },
    );
  });

  it('names the same problem for wide objects, whose key lists are not kept between bodies', () => {
    const wide = fc.dictionary(fc.string({ maxLength: 3 }), hostile, { minKeys: 60, maxKeys: 90 });
    fc.assert(
      fc.property(fc.array(wide, { minLength: 1, maxLength: 3 }), (bodies) => {
        // Walked one after another, as requests are: no list of an earlier body may leak in.
        for (const body of [...bodies, { outer: bodies }]) {
          const parsed: unknown = JSON.parse(JSON.stringify(body));
          expect(bodyShapeProblem(parsed)).toBe(referenceProblem(parsed));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('an earlier body with more keys does not change the problem a later one names', () => {
    const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
    const later = { z: { constructor: 1 }, w: deep(40) };
    // The last member first: the nesting of w, not the key in z.
    expect(referenceProblem(later)).toBe('request body nests deeper than 32 levels');
    bodyShapeProblem({ x: 1, y: 1, z: 1 });
    expect(bodyShapeProblem(later)).toBe(referenceProblem(later));
  });

  it('stops at the depth limit, however deep the body nests', () => {
    const deep: unknown = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(bodyShapeProblem(deep)).toBe('request body nests deeper than 32 levels');
    expect(bodyShapeProblem(JSON.parse('{"a":[{"__proto__":1}]}'))).toBe(
      'request body contains the forbidden key "__proto__"',
    );
  });
});
