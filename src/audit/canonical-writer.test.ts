import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withCanonicalBytes, withCanonicalBytesAndPlace, type MemberPlace } from './canonical-writer.js';
import {
  canonicalJson,
  entryLeafHash,
  GENESIS_HASH,
  sealEntry,
  sealForStorage,
  storedText,
} from './chain.js';
import { leafHash } from './merkle/tree-hash.js';

// The reference implementation of RFC 8785.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

const bytesOf = (value: unknown) => withCanonicalBytes(value, (bytes) => Buffer.from(bytes));

/** `member` spliced in at `place` as sealing does it. */
function insert(bytes: Buffer, place: MemberPlace, member: string): string {
  const text = `${place.afterMember ? ',' : ''}${member}${!place.afterMember && place.beforeMember ? ',' : ''}`;
  return Buffer.concat([
    bytes.subarray(0, place.offset),
    Buffer.from(text),
    bytes.subarray(place.offset),
  ]).toString();
}

describe('canonical writer', () => {
  it('writes the bytes of the canonicalize package for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        expect(bytesOf(value).toString('utf8')).toBe(canonicalize(value));
      }),
      { numRuns: 1_000 },
    );
  });

  it('writes strings of any characters, short and long, as JSON.stringify does', () => {
    const texts = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom('a', 'é', '€', '𝄞', '\u0000', '"', '\\', '\ud800', '\udc00', '\u007f'),
        maxLength: 80,
      }),
    );
    fc.assert(
      fc.property(texts, (text) => {
        expect(bytesOf(text).toString('utf8')).toBe(JSON.stringify(text));
        expect(bytesOf({ [text]: text }).toString('utf8')).toBe(canonicalize({ [text]: text }));
      }),
      { numRuns: 3_000 },
    );
    // At the 32-character bound of the byte-by-byte path, a non-ASCII last character.
    for (const length of [31, 32, 33]) {
      const text = `${'a'.repeat(length - 1)}é`;
      expect(bytesOf(text).toString('utf8')).toBe(JSON.stringify(text));
    }
  });

  it('grows past its buffer for large values and keeps working for small ones after', () => {
    const large = { b: 'é'.repeat(200_000), a: ['x'.repeat(70_000), { z: 1, y: '€'.repeat(50_000) }] };
    expect(bytesOf(large).toString('utf8')).toBe(canonicalize(large));
    expect(bytesOf({ b: 1, a: 'é' }).toString('utf8')).toBe('{"a":"é","b":1}');
    // 64 Ki multi-byte characters: three times as many bytes as characters.
    const wide = '€'.repeat(65_536);
    expect(bytesOf(wide).toString('utf8')).toBe(JSON.stringify(wide));
  });

  it('leaves out what JSON leaves out, writes toJSON results, and refuses what it cannot hold', () => {
    const value = {
      u: undefined,
      f: () => 1,
      d: new Date(0),
      list: [undefined, () => 1, Symbol('s')],
      n: -0,
    };
    expect(bytesOf(value).toString()).toBe('{"d":"1970-01-01T00:00:00.000Z","list":[null,null,null],"n":0}');
    for (const nothing of [undefined, () => 1, Symbol('s')]) {
      expect(() => bytesOf(nothing)).toThrow(new TypeError('value is not serialisable as JSON'));
    }
    expect(() => bytesOf({ a: Number.NaN })).toThrow('NaN is not allowed in canonical JSON');
    expect(() => bytesOf([Infinity])).toThrow('Infinity is not allowed in canonical JSON');
    expect(() => bytesOf({ a: 1n })).toThrow('BigInt is not allowed in canonical JSON');
  });

  it('writes short strings across the end of its buffer, wherever that end falls', () => {
    // Past the largest buffer the writer keeps (1 MiB), so every end it grows past is
    // crossed; the four offsets put a string's bytes across each end in every alignment.
    const many = Array.from({ length: 300_000 }, (_, i) => 'abcde'.slice(0, 1 + (i % 2)));
    for (let offset = 0; offset < 4; offset += 1) {
      const value = ['p'.repeat(40 + offset), ...many];
      expect(bytesOf(value).toString('utf8') === JSON.stringify(value), `offset ${offset}`).toBe(true);
    }
  });

  it('writes disordered objects nested deep once each (a wrong order is found before writing)', () => {
    let nested: Record<string, unknown> = { z: 1, a: 2 };
    for (let i = 0; i < 60; i++) nested = { z: nested, a: i };
    expect(bytesOf(nested).toString()).toBe(canonicalize(nested));
  });

  it('skips inherited members and keeps own ones named __proto__', () => {
    const inherited = Object.create({ inheritedKey: 1 }) as Record<string, unknown>;
    inherited.own = 2;
    expect(bytesOf(inherited).toString()).toBe('{"own":2}');
    const hostile: unknown = JSON.parse('{"z":1,"__proto__":{"b":2,"a":1}}');
    expect(bytesOf(hostile).toString()).toBe('{"__proto__":{"a":1,"b":2},"z":1}');
  });

  it('gives a call made while its bytes are in use a buffer of its own', () => {
    const outer = withCanonicalBytes({ outer: 'x'.repeat(100) }, (bytes) => {
      const inner = withCanonicalBytes({ inner: 1 }, (innerBytes) => innerBytes.toString());
      return `${bytes.toString()}|${inner}`;
    });
    expect(outer).toBe(`{"outer":"${'x'.repeat(100)}"}|{"inner":1}`);
    // And the shared buffer is free again afterwards.
    expect(bytesOf({ again: true }).toString()).toBe('{"again":true}');
  });

  it('writes every call into one kept buffer, and lets go of one that a huge value grew past 1 MiB', () => {
    const bufferOf = (value: unknown) => withCanonicalBytes(value, (bytes) => bytes.buffer);
    // Past 1 MiB: let go after the call, so that the next call writes into a small one.
    const huge = bufferOf('x'.repeat(2_000_000));
    expect(huge.byteLength).toBeGreaterThan(1024 * 1024);
    const small = bufferOf({ a: 1 });
    // (Compared as booleans: a failed toBe would diff megabytes.)
    expect(small === huge).toBe(false);
    expect(small.byteLength).toBeLessThan(1024 * 1024);
    // Each call writes into the same buffer: sealing allocates nothing for its bytes.
    expect(bufferOf(['b', 2]) === small).toBe(true);
    // Short strings (690 KB) double it to exactly 1 MiB, which is kept.
    const grown = bufferOf(Array.from({ length: 30_000 }, () => 'twenty characters...'));
    expect(grown.byteLength).toBe(1024 * 1024);
    expect(bufferOf({ a: 1 }) === grown).toBe(true);
  });

  it('refuses to place a member the object already has, unless that member is left out', () => {
    expect(() =>
      withCanonicalBytesAndPlace({ a: 1, hash: 'x' }, 'hash', (bytes) => bytes.toString()),
    ).toThrow(new TypeError('value already has a member "hash"'));
    const placed = withCanonicalBytesAndPlace({ a: 1, hash: undefined, z: 2 }, 'hash', (bytes, place) =>
      insert(bytes, place, '"hash":"v"'),
    );
    expect(placed).toBe('{"a":1,"hash":"v","z":2}');
    // An inherited member is not written either.
    const heir = Object.assign(Object.create({ hash: 'inherited' }) as Record<string, unknown>, { a: 1 });
    expect(
      withCanonicalBytesAndPlace(heir, 'hash', (bytes, place) => insert(bytes, place, '"hash":"v"')),
    ).toBe('{"a":1,"hash":"v"}');
  });

  it('tells where a member goes only in a plain object, and refuses anything else', () => {
    for (const value of ['text', 5, null, [1, 2], new Date(0), { toJSON: () => ({}) }]) {
      expect(() =>
        withCanonicalBytesAndPlace(value as Record<string, unknown>, 'hash', (bytes) => bytes.toString()),
      ).toThrow(new TypeError('value is not a plain object'));
    }
  });

  it('tells where a member of a given name goes, for any object and name', () => {
    const objects = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 });
    fc.assert(
      fc.property(objects, fc.string({ maxLength: 6 }), fc.boolean(), (object, key, leaveOut) => {
        fc.pre(!Object.hasOwn(object, key));
        // A left-out member right after the place must not count as one written there.
        const withHole: Record<string, unknown> = leaveOut
          ? { ...object, [`${key}\u0000`]: undefined }
          : object;
        const text = withCanonicalBytesAndPlace(withHole, key, (bytes, place) =>
          insert(bytes, place, `${JSON.stringify(key)}:"v"`),
        );
        expect(text).toBe(canonicalize({ ...object, [key]: 'v' }));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('sealing with the writer', () => {
  const contents = fc.record({
    actor_id: fc.oneof(fc.string(), fc.constant(null)),
    capability: fc.oneof(fc.string(), fc.constant(null)),
    data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
    decision_id: fc.oneof(fc.uuid(), fc.constant(null)),
    event_type: fc.constantFrom('governance.decision', 'governance.review', 'policy.created' as const),
    id: fc.uuid(),
    outcome: fc.constantFrom(null, 'ALLOW', 'DENY'),
    policies_evaluated: fc.array(fc.string(), { maxLength: 3 }),
    policy_matched: fc.oneof(fc.string(), fc.constant(null)),
    risk_score: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
    timestamp: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  });

  it('stores the canonical JSON of the sealed entry and leaf-hashes what its hash covers', () => {
    fc.assert(
      fc.property(contents, fc.integer({ min: 0, max: 2 ** 40 }), (content, seq) => {
        const previous = seq === 0 ? null : { seq, hash: `sha256:${'ab'.repeat(32)}` };
        const { id, ...event } = content;
        const sealed = sealForStorage(event, id, previous);
        expect(sealed.entry).toEqual(sealEntry(content, previous));
        expect(sealed.entry.previous_hash).toBe(previous?.hash ?? GENESIS_HASH);
        expect(sealed.stored.toString('utf8')).toBe(canonicalize(sealed.entry));
        expect(sealed.stored.toString('utf8')).toBe(storedText(sealed.entry));
        const { hash: _hash, ...unsealed } = sealed.entry;
        expect(sealed.leaf.equals(leafHash(Buffer.from(canonicalize(unsealed)!)))).toBe(true);
        expect(sealed.leaf.equals(entryLeafHash(sealed.entry))).toBe(true);
        expect(canonicalJson(unsealed)).toBe(canonicalize(unsealed));
      }),
      { numRuns: 500 },
    );
  });

  it('seals an event as entry `id`, whatever members the event has', () => {
    fc.assert(
      fc.property(
        contents,
        fc.constantFrom('as is', 'extra member', 'member missing', 'id given'),
        (content, variant) => {
          const { id, ...event } = content;
          const odd: Record<string, unknown> = { ...event };
          if (variant === 'extra member') odd.zz = 1;
          if (variant === 'member missing') delete odd.outcome;
          if (variant === 'id given') odd.id = 'given';
          const sealed = sealForStorage(odd as never, id, null);
          const { hash: _hash, ...linked } = sealed.entry;
          expect(linked).toEqual({ ...odd, id, seq: 1, previous_hash: GENESIS_HASH });
          expect(sealed.stored.toString()).toBe(canonicalize(sealEntry({ ...odd, id } as never, null)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('links the first entry to the genesis hash, 64 zeros', () => {
    expect(GENESIS_HASH).toMatch(/^sha256:0{64}$/);
    const [content] = fc.sample(contents, { numRuns: 1, seed: 3 });
    expect(sealEntry(content!, null)).toMatchObject({ seq: 1, previous_hash: `sha256:${'0'.repeat(64)}` });
  });

  it('seals exactly the members of an event, whatever their names', () => {
    const [content] = fc.sample(contents, { numRuns: 1, seed: 5 });
    const { id, ...event } = content!;
    const names = Object.keys(event);
    // An event's member swapped for another (named '' too), one left out, or none of its names.
    const variants: Record<string, unknown>[] = [
      ...names.flatMap((name) => {
        const { [name]: _swapped, ...rest } = event as Record<string, unknown>;
        return [rest, { ...rest, '': 'swapped in' }, { ...rest, [`${name}_`]: 'swapped in' }];
      }),
      Object.fromEntries(names.map((name) => [name.toUpperCase(), 'other'])),
    ];
    for (const odd of variants) {
      const sealed = sealForStorage(odd as never, id, null);
      const expected = { ...odd, id, seq: 1, previous_hash: GENESIS_HASH, hash: sealed.entry.hash };
      expect(Object.keys(sealed.entry).sort(), JSON.stringify(Object.keys(odd))).toEqual(
        Object.keys(expected).sort(),
      );
      expect(sealed.stored.toString('utf8')).toBe(canonicalize(expected));
    }
  });

  it('refuses to seal an event with a member named hash: the entry would hold two', () => {
    const [content] = fc.sample(contents, { numRuns: 1, seed: 7 });
    const { id, ...event } = content!;
    expect(() => sealForStorage({ ...event, hash: 'sha256:chosen' } as never, id, null)).toThrow(
      new TypeError('value already has a member "hash"'),
    );
  });

  it('seals content with other members than an entry has, members after `hash` or none', () => {
    for (const content of [{ zz: 1 }, { aa: 1 }, { hash0: 'x', h: [1] }, {}]) {
      const sealed = sealForStorage(content as never, 'e-1', null);
      expect(sealed.stored.toString('utf8')).toBe(canonicalize(sealed.entry));
    }
  });
});
