import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint } from './audit-log.js';
import { sealEntry, storedText } from './chain.js';
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
