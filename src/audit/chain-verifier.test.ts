import { describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint } from './audit-log.js';
import { ChainVerifier } from './chain-verifier.js';
import { sealEntry } from './chain.js';
import { event } from './file/test-fixtures.js';

function sealedChain(count: number): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let seq = 1; seq <= count; seq += 1) {
    entries.push(sealEntry({ id: `aud-${seq}`, ...event({ data: { seq } }) }, entries.at(-1) ?? null));
  }
  return entries;
}

const checkpointAt = (seq: number, hash = `sha256:${'c'.repeat(64)}`): Checkpoint => ({
  seq,
  hash,
  entry_id: `aud-${seq}`,
  time: '2025-01-01T00:00:00.000Z',
});

function verify(entries: AuditEntry[], checkpoints: Checkpoint[] = []) {
  const verifier = new ChainVerifier(null, checkpoints);
  const found = entries.map((entry) => verifier.push(entry));
  return { found, report: verifier.finish() };
}

describe('ChainVerifier', () => {
  const entries = sealedChain(5);

  it('reports an unbroken run as ok, with its head and what it checked', () => {
    const { found, report } = verify(entries, [checkpointAt(4, entries[3]!.hash)]);
    expect(found).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(report).toStrictEqual({
      ok: true,
      entries_checked: 5,
      head: { seq: 5, hash: entries[4]!.hash },
      checkpoints_checked: 1,
    });
  });

  it('stops at the first break: the entries after it change neither the break nor the counts', () => {
    const altered = entries.map((e) => (e.seq === 3 ? { ...e, outcome: 'DENY' as const } : e));
    const { found, report } = verify(altered);
    const first = {
      seq: 3,
      entry_id: 'aud-3',
      reason: 'hash does not match the entry contents: the entry was altered',
    };
    expect(found[2]).toEqual(first);
    expect(found[3]).toBe(found[2]);
    expect(found[4]).toBe(found[2]);
    expect(report).toStrictEqual({
      ok: false,
      entries_checked: 2,
      head: { seq: 2, hash: entries[1]!.hash },
      checkpoints_checked: 0,
      break: first,
    });
  });

  it('names the entry whose previous_hash is not the hash of the one before it', () => {
    const { id: _id, seq: _seq, previous_hash: _previous, hash: _hash, ...content } = entries[2]!;
    const relinked = sealEntry({ ...content, id: 'aud-3' }, { seq: 2, hash: entries[0]!.hash });
    const { report } = verify([entries[0]!, entries[1]!, relinked, entries[3]!]);
    expect(report.break).toEqual({
      seq: 3,
      entry_id: 'aud-3',
      reason: 'previous_hash does not match the hash of entry 2',
    });
  });

  it('names the lowest checkpoint beyond the last entry as evidence of a truncated tail', () => {
    const { report } = verify(entries, [checkpointAt(12), checkpointAt(9), checkpointAt(7), checkpointAt(8)]);
    expect(report).toMatchObject({
      ok: false,
      entries_checked: 5,
      break: { seq: 6, reason: 'log ends at seq 5 but checkpoint 7 exists: entries were truncated' },
    });
  });

  it('keeps a break found in the entries over a truncation found after them', () => {
    const { report } = verify([entries[0]!, entries[2]!], [checkpointAt(9)]);
    expect(report.break).toEqual({ seq: 2, reason: 'expected seq 2, found 3: entries missing or reordered' });
  });
});
