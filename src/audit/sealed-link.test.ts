import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from './audit-log.js';
import { canonicalJson, GENESIS_HASH, hashEntry, sealEntry, storedText } from './chain.js';
import { sealedLink } from './sealed-link.js';

function entry(data: Record<string, unknown>, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return sealEntry(
    {
      id: 'aud_1',
      event_type: 'governance.decision',
      timestamp: '2026-11-23T12:00:00.000Z',
      actor_id: 'agent-1',
      capability: 'db.read',
      outcome: 'ALLOW',
      risk_score: 0.25,
      decision_id: 'dec-1',
      policies_evaluated: ['p-one', 'p"two,"hash":"'],
      policy_matched: null,
      data,
      ...overrides,
    },
    { seq: 41, hash: `sha256:${'a'.repeat(64)}` },
  );
}

// Content chosen to trip a naive splice or scan: nested keys named like the chain's, quotes, braces.
const AWKWARD = [
  {},
  { hash: 'sha256:x', id: 'nested', seq: 3, previous_hash: GENESIS_HASH },
  { request: { parameters: { q: '","hash":"sha256:0', '}': '{' } } },
  { list: [{ a: 1 }, [2, '"x"']], '10': 1, '9': 2, é: 'ü', emoji: '🙂' },
];

describe('storedText', () => {
  it('is the canonical JSON of the whole entry, hash included', () => {
    for (const data of AWKWARD) {
      const e = entry(data);
      expect(storedText(e)).toBe(canonicalJson(e));
      expect(JSON.parse(storedText(e))).toEqual(e);
    }
  });

  it('serialises entries it did not seal the same way', () => {
    const e = entry(AWKWARD[1]!);
    const copy = JSON.parse(JSON.stringify(e)) as AuditEntry;
    expect(storedText(copy)).toBe(storedText(e));
  });
});

describe('sealedLink', () => {
  it('reads the chain fields of an entry in its stored form', () => {
    for (const data of AWKWARD) {
      const e = entry(data);
      expect(sealedLink(storedText(e))).toEqual({
        seq: 42,
        id: 'aud_1',
        previous_hash: e.previous_hash,
        hash: e.hash,
      });
      expect(hashEntry(e)).toBe(e.hash);
    }
  });

  it('gives up on any changed character, ASCII or not, so the full check names the break', () => {
    // AWKWARD[2] is ASCII (hashed from the reused byte buffer), AWKWARD[3] is not (hashed as a string).
    for (const data of [AWKWARD[2]!, AWKWARD[3]!]) {
      const text = storedText(entry(data));
      for (let i = 0; i < text.length; i += 1) {
        const code = text.charCodeAt(i);
        const changed =
          text.slice(0, i) + String.fromCharCode(code === 0x30 ? 0x31 : code ^ 1) + text.slice(i + 1);
        expect(sealedLink(changed), `character ${i}`).toBeUndefined();
      }
    }
  });

  it('proves entries of any size, and nothing of one entry carries over to the next', () => {
    const sizes = [100_000, 70_000, 10, 65_536 - 600, 3];
    const entries = sizes.map((n) => entry({ text: 'x'.repeat(n) }));
    for (const e of entries) expect(sealedLink(storedText(e))?.hash).toBe(e.hash);
    // A short entry after a long one: were the bytes after its end read, it would not prove itself.
    const long = storedText(entry({ text: 'y'.repeat(5_000) }));
    const short = storedText(entries[4]!);
    expect(sealedLink(long)).toBeDefined();
    expect(sealedLink(short)?.hash).toBe(entries[4]!.hash);
    // The same entry truncated by a character, right after its whole form was proven.
    expect(sealedLink(short.replace('"xxx"', '"xx"'))).toBeUndefined();
  });

  it('gives up on a hash member moved into nested data (its bytes would still hash right)', () => {
    const e = entry({ note: 'x', other: 1 });
    const text = storedText(e);
    const member = `,"hash":${JSON.stringify(e.hash)}`;
    const without = text.replace(member, '');
    const nested = without.replace('"note":"x"', `"note":"x"${member}`);
    expect(nested).not.toBe(text);
    expect(sealedLink(nested)).toBeUndefined();
  });

  it('gives up on other byte forms of a valid entry (JSON.stringify order) and on non-entries', () => {
    const e = entry({ a: 1 });
    expect(sealedLink(JSON.stringify(e))).toBeUndefined();
    expect(sealedLink('')).toBeUndefined();
    expect(sealedLink('{"hash":"sha256:00"}')).toBeUndefined();
    expect(sealedLink(storedText(entry({}, { id: 'aud_{' })))).toBeUndefined();
  });
});

/** The link sealedLink must read from an entry's stored form. */
function linkOf(e: AuditEntry) {
  return { seq: e.seq, id: e.id, previous_hash: e.previous_hash, hash: e.hash };
}

/**
 * An entry whose stored form the reused byte buffer (3 bytes for each of 64 Ki characters)
 * cuts at a character boundary with exactly as many bytes written as the text has
 * characters: it is not all in the buffer, and must be hashed as a string.
 */
function entryAtScratchEdge(): AuditEntry {
  const probe = storedText(entry({ text: '\u00e9\u20ac' }));
  const before = probe.indexOf('\u00e9'); // ASCII characters before the text
  const after = probe.length - before - 2; // and after it
  // 'é' takes 2 bytes and '€' 3: the buffer ends before the '€', with one byte more per
  // 'é' than characters, as many as the characters left unwritten from the '€' on.
  const accents = after + 1;
  const plain = 3 * 65_536 - 1 - before - 2 * accents;
  return entry({ text: `${'\u00e9'.repeat(accents)}${'a'.repeat(plain)}\u20ac` });
}

describe('sealedLink on entries as sealed', () => {
  it('reads every seq, from the first entry on, whatever its digits', () => {
    const { hash: _h, seq: _s, previous_hash: _p, ...content } = entry({});
    for (const seq of [1, 2, 9, 10, 19, 90, 99, 100, 909, 2 ** 40]) {
      const previous = seq === 1 ? null : { seq: seq - 1, hash: `sha256:${'a'.repeat(64)}` };
      const e = sealEntry({ ...content, id: `aud_${seq}` }, previous);
      expect(sealedLink(storedText(e)), `seq ${seq}`).toEqual(linkOf(e));
    }
  });

  it('reads entries whose hash is far from the end, whose seq is last, or whose data holds a lookalike', () => {
    const base = entry({});
    const { hash: _h, seq: _s, previous_hash: _p, ...content } = base;
    const { timestamp: _t, ...untimed } = content;
    const previous = { seq: 41, hash: base.previous_hash };
    const cases: [string, AuditEntry][] = [
      [
        'a long tail after the hash',
        sealEntry(
          {
            ...content,
            policies_evaluated: Array.from({ length: 20 }, (_, i) => `policy-${i}`.padEnd(40, '-')),
          },
          previous,
        ),
      ],
      [
        'a long member after previous_hash',
        sealEntry({ ...content, zz: 'z'.repeat(300) } as typeof content, previous),
      ],
      ['seq as the last member', sealEntry(untimed as typeof content, previous)],
      [
        'a nested hash member early in the data',
        entry({ a: { b: 1, hash: `sha256:${'c'.repeat(64)}` }, z: 'x'.repeat(600) }),
      ],
      ['stored text the byte buffer cuts at a character boundary', entryAtScratchEdge()],
    ];
    for (const [name, e] of cases) expect(sealedLink(storedText(e)), name).toEqual(linkOf(e));
  });
});

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A line as one without any key can write it: its hash member is the digest of the rest. */
function forged(before: string, after: string): string {
  return `${before},"hash":"sha256:${sha256Hex(before + after)}"${after}`;
}

describe('sealedLink on forged lines whose hash matches their bytes', () => {
  const previous = `"previous_hash":"sha256:${'b'.repeat(64)}"`;
  const link = `"id":"aud_9",${previous}`;

  it('reads a well-formed one (the link to its successor or a checkpoint must catch it)', () => {
    const text = forged('{"a":1', `,${link},"seq":7}`);
    expect(sealedLink(text)).toEqual({
      seq: 7,
      id: 'aud_9',
      previous_hash: `sha256:${'b'.repeat(64)}`,
      hash: `sha256:${sha256Hex(`{"a":1,${link},"seq":7}`)}`,
    });
  });

  it.each([
    ['no comma after the hash member', `;${link},"seq":7}`],
    ['no previous_hash', `,"id":"aud_9","pad":"${'p'.repeat(100)}","seq":7}`],
    ['a previous_hash of 63 hex digits', `,"id":"aud_9","previous_hash":"sha256:${'b'.repeat(63)}","seq":7}`],
    ['a previous_hash of 65 hex digits', `,"id":"aud_9","previous_hash":"sha256:${'b'.repeat(65)}","seq":7}`],
    ['no id', `,${previous},"seq":7}`],
    ['an id never closed', `,${previous},"seq":7,"id":"aud_9}`],
    ['no seq', `,${link}}`],
    ['no seq, but digits where a missing one would be read', `,"":12,${link}}`],
    ['seq 0', `,${link},"seq":0}`],
    ['a negative seq', `,${link},"seq":-7}`],
    ['a seq beyond the safe integers', `,${link},"seq":9007199254740993}`],
    ['a fractional seq', `,${link},"seq":7.5}`],
    ['a seq followed by a letter', `,${link},"seq":7a}`],
    ['a seq written as a string', `,${link},"seq":"7"}`],
    ['a nested object after the hash', `,${link},"seq":7,"o":{}}`],
  ])('refuses one with %s', (_name, after) => {
    expect(sealedLink(forged('{"a":1', after))).toBeUndefined();
  });
});

describe('sealEntry', () => {
  it('hashes the canonical JSON of the entry, whatever the order or set of its members', () => {
    const sealed = entry({ b: 1, a: 2 });
    const { hash: _hash, ...unsealed } = sealed;
    expect(sealed.hash).toBe(hashEntry(unsealed));
    // The same content handed over in reverse member order seals to the same entry.
    const { seq: _seq, previous_hash: _previous, ...content } = unsealed;
    const reversed = Object.fromEntries(Object.entries(content).reverse()) as typeof content;
    const again = sealEntry(reversed, { seq: 41, hash: `sha256:${'a'.repeat(64)}` });
    expect(again.hash).toBe(sealed.hash);
    expect(storedText(again)).toBe(storedText(sealed));
    // A member an entry does not have is sealed too, not dropped.
    const extra = sealEntry({ ...content, note: 'kept' } as typeof content, null);
    expect(JSON.parse(storedText(extra))).toMatchObject({
      note: 'kept',
      seq: 1,
      previous_hash: GENESIS_HASH,
    });
    expect(extra.hash).toBe(hashEntry(extra));
    // One missing member is left out, not written as null.
    const { decision_id: _gone, ...fewer } = content;
    const missing = sealEntry(fewer as typeof content, null);
    expect(storedText(missing)).not.toContain('decision_id');
    expect(missing.hash).toBe(hashEntry(missing));
    // As many members as an entry has, but not the same ones.
    const swapped = sealEntry({ ...fewer, note: 'kept' } as unknown as typeof content, null);
    expect(JSON.parse(storedText(swapped))).toMatchObject({ note: 'kept' });
    expect(storedText(swapped)).not.toContain('decision_id');
    expect(swapped.hash).toBe(hashEntry(swapped));
  });
});
