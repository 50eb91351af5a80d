import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint } from './audit-log.js';
import { GENESIS_HASH, sealEntry, storedText } from './chain.js';
import { verifyExportStream } from './export-verify.js';

function chain(n: number): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let i = 1; i <= n; i += 1) {
    entries.push(
      sealEntry(
        {
          id: `aud_${i}`,
          event_type: 'governance.decision',
          timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
          actor_id: 'agent-1',
          capability: 'db.read',
          outcome: 'ALLOW',
          risk_score: 0.1,
          decision_id: `dec-${i}`,
          policies_evaluated: [],
          policy_matched: null,
          data: { i },
        },
        entries.at(-1) ?? null,
      ),
    );
  }
  return entries;
}

function stream(lines: string[]): AsyncIterable<string> {
  return Readable.from(lines);
}

const checkpointOf = (e: AuditEntry): Checkpoint => ({ seq: e.seq, hash: e.hash, entry_id: e.id, time: '' });

// The stored form proves its hash without a parse (sealed-link.ts); other JSON takes the full path.
const FORMS = [
  ['stored form', storedText],
  ['JSON.stringify', (e: AuditEntry) => JSON.stringify(e)],
] as const;

describe.each(FORMS)('verifyExportStream, lines in %s', (_form, write) => {
  const entries = chain(10);
  const lines = (list: AuditEntry[]) => list.map(write);

  it('verifies a whole export from genesis, checkpoints included', async () => {
    const report = await verifyExportStream(stream([...lines(entries), '']), {
      checkpoints: [checkpointOf(entries[4]!), checkpointOf(entries[9]!)],
    });
    expect(report).toMatchObject({
      ok: true,
      entries_checked: 10,
      checkpoints_checked: 2,
      lines: 10,
      head: { seq: 10, hash: entries[9]!.hash },
      start: { seq: 0, trusted: 'genesis' },
      notes: [],
    });
  });

  it('names the line, seq and entry of an altered entry', async () => {
    const text = lines(entries);
    text[3] = text[3]!.replace('"ALLOW"', '"DENY"');
    const report = await verifyExportStream(stream(text));
    expect(report).toMatchObject({ ok: false, break: { seq: 4, entry_id: 'aud_4', line: 4 } });
  });

  it('reports unparsable lines with their numbers', async () => {
    const text = lines(entries);
    text[2] = '{"broken';
    text[6] = 'not json';
    const report = await verifyExportStream(stream(text));
    expect(report).toMatchObject({ ok: false, unparsable_lines: [3, 7], break: { seq: 3, line: 3 } });
  });

  it('reports a missing line as a seq gap at the line after it', async () => {
    const text = lines(entries).filter((_, i) => i !== 5);
    expect((await verifyExportStream(stream(text))).break).toMatchObject({ seq: 6, line: 6 });
  });

  it('detects a tail cut below a checkpoint', async () => {
    const report = await verifyExportStream(stream(lines(entries.slice(0, 6))), {
      checkpoints: [checkpointOf(entries[7]!)],
    });
    expect(report.break).toMatchObject({ seq: 7 });
    expect(report.break?.line).toBeUndefined();
  });

  it('trusts a mid-chain start and says so, unless a start head is given', async () => {
    const tail = lines(entries.slice(4));
    const trusted = await verifyExportStream(stream(tail));
    expect(trusted).toMatchObject({
      ok: true,
      entries_checked: 6,
      start: { seq: 4, trusted: 'first-entry' },
    });
    expect(trusted.notes[0]).toMatch(/trusted, not verified/);

    const given = await verifyExportStream(stream(tail), { start: { seq: 4, hash: entries[3]!.hash } });
    expect(given).toMatchObject({ ok: true, start: { trusted: 'given' }, notes: [] });

    const wrong = await verifyExportStream(stream(tail), { start: { seq: 4, hash: entries[2]!.hash } });
    expect(wrong).toMatchObject({ ok: false, break: { seq: 5, line: 1 } });
  });

  it('an empty export is ok unless checkpoints say entries existed', async () => {
    expect((await verifyExportStream(stream([]))).ok).toBe(true);
    const report = await verifyExportStream(stream([]), { checkpoints: [checkpointOf(entries[0]!)] });
    expect(report.break).toMatchObject({ seq: 1 });
  });
});

describe('verifyExportStream, what it reports besides the chain', () => {
  const entries = chain(10);
  const lines = entries.map(storedText);

  it('ignores lines of nothing but whitespace', async () => {
    const report = await verifyExportStream(stream([lines[0]!, '  ', '\t', ...lines.slice(1), ' \r']));
    expect(report).toMatchObject({ ok: true, lines: 10, entries_checked: 10, unparsable_lines: [] });
  });

  it('counts unparsable lines, lists the first hundred, and names the first in the break', async () => {
    const junk = Array.from({ length: 150 }, (_, i) => `junk ${i}`);
    const report = await verifyExportStream(stream([...lines.slice(0, 3), ...junk]));
    expect(report.lines).toBe(153);
    expect(report.unparsable_lines).toEqual(Array.from({ length: 100 }, (_, i) => i + 4));
    expect(report.break).toMatchObject({ seq: 4, line: 4 });
    expect(report.break?.reason).toMatch(/^line 4: not valid JSON \(.+\)$/);
  });

  it('checks no entry after a line that holds none, though the chain would go on', async () => {
    const report = await verifyExportStream(stream([...lines.slice(0, 2), 'junk', ...lines.slice(2)]));
    expect(report).toMatchObject({
      ok: false,
      lines: 11,
      entries_checked: 2,
      head: { seq: 2, hash: entries[1]!.hash },
      break: { seq: 3, line: 3 },
    });
  });

  it('says which start it trusted and how to check it', async () => {
    const report = await verifyExportStream(stream(lines.slice(4)));
    expect(report.notes).toEqual([
      'export starts mid-chain at seq 5: its previous_hash was trusted, not verified; pass a start head or a checkpoint at seq 4 to check it',
    ]);
  });

  it('reports an empty export as the genesis head', async () => {
    const report = await verifyExportStream(stream([]));
    expect(report.head).toStrictEqual({ seq: 0, hash: GENESIS_HASH });
    expect(report.start).toStrictEqual({ seq: 0, hash: GENESIS_HASH, trusted: 'genesis' });
  });
});
