import { readFile, writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { FileAuditLog } from '../../src/audit/file/index.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

/** arbiter audit verify A.jsonl B.jsonl: an archive and what follows it, as one chain. */
describe('arbiter audit verify with several files', () => {
  const fixtures = useFixtureDir('arbiter-verify-archives-');
  let lines: string[];
  const write = (name: string, part: string[]) => writeFile(fixtures.path(name), `${part.join('\n')}\n`);

  beforeAll(async () => {
    const audit = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 100, seconds: 3600 },
      retainCheckpoints: 5,
    });
    for (let i = 0; i < 9; i++) {
      await audit.append({
        event_type: 'governance.decision',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        actor_id: 'agent-1',
        capability: 'db.read',
        outcome: 'ALLOW',
        risk_score: 0.2,
        decision_id: `dec-${i}`,
        policies_evaluated: [],
        policy_matched: null,
        data: { n: i },
      });
    }
    await audit.close();
    lines = (await readFile(fixtures.path('data/audit.jsonl'), 'utf8')).split('\n').filter(Boolean);
    await write('a.jsonl', lines.slice(0, 4));
    await write('b.jsonl', lines.slice(4, 7));
    await write('c.jsonl', lines.slice(7));
  });

  it('verifies files that continue one another as one chain from genesis', async () => {
    const result = await runArbiter([
      'audit',
      'verify',
      fixtures.path('a.jsonl'),
      fixtures.path('b.jsonl'),
      fixtures.path('c.jsonl'),
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('verified: 9 entries, head seq 9\n');
    expect(JSON.parse(result.stdout).start.trusted).toBe('genesis');
  });

  it('verifies a later file on its own, saying that its start is taken on trust', async () => {
    const result = await runArbiter(['audit', 'verify', fixtures.path('b.jsonl')]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).start).toMatchObject({ trusted: 'first-entry', seq: 4 });
  });

  it('names the file and line where the next file does not continue the one before', async () => {
    // c.jsonl after a.jsonl: entries 5..7 are missing.
    const gap = await runArbiter(['audit', 'verify', fixtures.path('a.jsonl'), fixtures.path('c.jsonl')]);
    expect(gap.code).toBe(1);
    expect(gap.stderr).toMatch(new RegExp(`^BROKEN at seq 5 \\(${fixtures.path('c.jsonl')} line 1\\): `));
    // In the wrong order.
    const swapped = await runArbiter(['audit', 'verify', fixtures.path('b.jsonl'), fixtures.path('a.jsonl')]);
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toContain(`(${fixtures.path('a.jsonl')} line 1)`);
    // A changed entry in the second file.
    await write('b-changed.jsonl', [lines[4]!.replace('"n":4', '"n":40'), ...lines.slice(5, 7)]);
    const changed = await runArbiter([
      'audit',
      'verify',
      fixtures.path('a.jsonl'),
      fixtures.path('b-changed.jsonl'),
    ]);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(
      new RegExp(`^BROKEN at seq 5 \\(${fixtures.path('b-changed.jsonl')} line 1\\)`),
    );
  });
});
