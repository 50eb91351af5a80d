import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertCanonicalisable, canonicalJson, withCanonicalOrder } from './chain.js';

// The reference implementation of RFC 8785 that chain.ts used before it had its own.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

describe('canonicalJson', () => {
  it('writes what the canonicalize package writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes the same for values already in canonical order (the native path) and for sorted copies', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const reference = canonicalize(value)!;
        // Parsing canonical text gives objects whose members are in canonical order.
        const ordered: unknown = JSON.parse(reference);
        expect(canonicalJson(ordered)).toBe(reference);
      }),
      { numRuns: 1_000 },
    );
  });

  it('withCanonicalOrder: same canonical JSON, input untouched, and JSON.stringify writes it exactly', () => {
    const orderable = (key: string) => !/^[0-9]/.test(key) && key !== '__proto__';
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const before = JSON.stringify(value);
        const ordered = withCanonicalOrder(value);
        expect(JSON.stringify(value)).toBe(before);
        expect(canonicalJson(ordered)).toBe(canonicalize(value));
        // Keys starting with a digit or named __proto__ cannot be put in order; the rest can.
        if (collectObjectKeys(value).every(orderable)) {
          expect(JSON.stringify(ordered)).toBe(canonicalize(value));
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('withCanonicalOrder copies each disordered object once, however deep', () => {
    let nested: Record<string, unknown> = { z: 1, a: 2 };
    for (let i = 0; i < 40; i++) nested = { z: nested, a: i };
    const ordered = withCanonicalOrder(nested);
    expect(JSON.stringify(ordered)).toBe(canonicalJson(nested));
  });

  it('withCanonicalOrder returns what is in canonical order already as it is, at every depth', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        // Parsing canonical text gives objects whose members are in canonical order.
        const ordered: unknown = JSON.parse(canonicalize(value)!);
        expect(withCanonicalOrder(ordered)).toBe(ordered);
      }),
      { numRuns: 500 },
    );
    // Only the disordered object is copied; its ordered siblings and their arrays are kept.
    const kept = { x: 1, y: [{ a: 1, b: 2 }] };
    const list = [{ a: 1 }, 'b'];
    const value = { a: kept, b: { z: 1, a: 2 }, c: list };
    const ordered = withCanonicalOrder(value);
    expect(ordered).not.toBe(value);
    expect(ordered.a).toBe(kept);
    expect(ordered.c).toBe(list);
    expect(JSON.stringify(ordered)).toBe(
      '{"a":{"x":1,"y":[{"a":1,"b":2}]},"b":{"a":2,"z":1},"c":[{"a":1},"b"]}',
    );
  });

  it('withCanonicalOrder orders objects of more keys than insertion sort handles', () => {
    for (const count of [15, 16, 17, 40]) {
      const keys = Array.from({ length: count }, (_, i) => `k${String(i).padStart(2, '0')}`);
      const reversed = Object.fromEntries(keys.toReversed().map((key, i) => [key, i]));
      expect(JSON.stringify(withCanonicalOrder(reversed))).toBe(canonicalize(reversed));
    }
  });

  it('withCanonicalOrder returns objects no copy can hold in order as they are, writing the same JSON', () => {
    class Money {
      constructor(
        readonly units: number,
        readonly currency: string,
      ) {}
      toJSON() {
        return `${this.units} ${this.currency}`;
      }
    }
    const inheriting = Object.create({ inherited: 1 }) as Record<string, unknown>;
    inheriting.z = 1;
    inheriting.a = 2;
    const hostile: [string, () => object][] = [
      ['a member named __proto__', () => JSON.parse('{"z":1,"__proto__":{"polluted":true},"a":2}') as object],
      ['integer-like keys, enumerated first', () => ({ b: 1, '10': 2, '9': 3 })],
      ['a key starting with 0', () => ({ b: 1, '0a': 2 })],
      ['a key starting with 9', () => ({ b: 1, '9a': 2 })],
      ['an inherited enumerable member', () => inheriting],
      ['an own toJSON that reads its object', () => ({ z: 1, a: 2, toJSON: keysOfThis })],
      ['a class with toJSON', () => new Money(3, 'EUR')],
    ];
    for (const [name, make] of hostile) {
      const value = make();
      const canonical = canonicalJson(value);
      expect(withCanonicalOrder(value), name).toBe(value);
      expect(withCanonicalOrder([value])[0], name).toBe(value);
      expect(canonicalJson(withCanonicalOrder({ y: 1, x: value })), name).toBe(`{"x":${canonical},"y":1}`);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps members named __proto__, leaves out inherited ones, and never changes its input', () => {
    const hostile: unknown = JSON.parse('{"z":1,"__proto__":{"b":2,"a":1},"a":[{"y":1,"x":2}]}');
    const before = JSON.stringify(hostile);
    expect(canonicalJson(hostile)).toBe('{"__proto__":{"a":1,"b":2},"a":[{"x":2,"y":1}],"z":1}');
    expect(canonicalJson(hostile)).toBe(canonicalize(hostile));
    expect(JSON.stringify(hostile)).toBe(before);
    const inheriting = Object.create({ inherited: 1 }) as Record<string, unknown>;
    inheriting.own = 2;
    expect(canonicalJson(inheriting)).toBe('{"own":2}');
  });

  it('agrees on the awkward cases: escapes, surrogates, key order, numbers, undefined members', () => {
    const values: unknown[] = [
      { '\u20ac': 1, '\r': 2, '\ufb33': 3, '1': 4, '\u0080': 5, '\ud83d\ude00': 6, a: 7, A: 8 },
      ['\u0000\u001f"\\/', '\ud800', '\udfff x', 'plain', '\u2028\u2029'],
      [1e21, 1e-7, -0, 0.1 + 0.2, 333333333.3333333, 5e-324, Number.MAX_SAFE_INTEGER],
      { a: undefined, b: [undefined], c: new Date(0), d: { toJSON: () => 'x' } },
      fc.sample(fc.string({ unit: 'binary' }), { numRuns: 200, seed: 7 }),
      fc.sample(fc.dictionary(fc.string({ unit: 'binary' }), fc.nat()), { numRuns: 100, seed: 8 }),
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(canonicalize(value));
  });

  it('assertCanonicalisable throws exactly when canonicalJson does', () => {
    const throws = (f: () => unknown) => {
      try {
        f();
        return false;
      } catch {
        return true;
      }
    };
    const hostile = fc.oneof(
      fc.constant(Number.NaN),
      fc.constant(-Infinity),
      fc.constant(undefined),
      fc.bigInt(),
    );
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withDate: true,
          withMap: true,
          withNullPrototype: true,
          withBoxedValues: true,
        }),
        hostile,
        (value, bad) => {
          for (const candidate of [value, { ok: value, bad }, [value, bad]]) {
            expect(throws(() => assertCanonicalisable(candidate))).toBe(
              throws(() => canonicalJson(candidate)),
            );
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('assertCanonicalisable refuses a member whose toJSON gives what JSON cannot hold', () => {
    // Finite members, written as what toJSON computes from them.
    class Ratio {
      constructor(
        readonly over: number,
        readonly under: number,
      ) {}
      toJSON(): unknown {
        return this.under === 7 ? BigInt(this.over) : this.over / this.under;
      }
    }
    for (const bad of [new Ratio(0, 0), new Ratio(1, 0), new Ratio(1, 7)]) {
      expect(() => canonicalJson({ ratio: bad })).toThrow(TypeError);
      expect(() => assertCanonicalisable({ ratio: bad })).toThrow(TypeError);
      expect(() => assertCanonicalisable([bad])).toThrow(TypeError);
    }
    expect(() => assertCanonicalisable({ ratio: new Ratio(1, 2), at: new Date(0) })).not.toThrow();
  });

  it('refuses what JCS cannot write', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ x: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson(10n)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });
});

/** A toJSON that writes the keys of its object in the order they enumerate. */
function keysOfThis(this: object): string[] {
  return Object.keys(this);
}

function collectObjectKeys(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(collectObjectKeys);
  return Object.entries(value).flatMap(([k, v]) => [k, ...collectObjectKeys(v)]);
}
