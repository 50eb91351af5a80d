import { readFile, writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { hashEntry, storedText } from '../../src/audit/chain.js';
import { FileAuditLog } from '../../src/audit/file/index.js';
import { formatVerifierKey, generateSigningKey } from '../../src/audit/note/note-keys.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

/** arbiter audit verify FILE --checkpoint FILE --vkey VKEY: the signed roots, not only the chain. */
describe('arbiter audit verify --vkey', () => {
  const fixtures = useFixtureDir('arbiter-verify-signed-');
  const key = generateSigningKey('arbiter.test/prod-audit');
  const vkey = formatVerifierKey(key);
  let log: string;
  let checkpoints: string;

  beforeAll(async () => {
    const audit = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 5, seconds: 3600 },
      retainCheckpoints: 20,
      signing: { key, origin: 'arbiter.test/prod-audit' },
    });
    for (let i = 0; i < 17; i++) {
      await audit.append({
        event_type: 'governance.decision',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        actor_id: 'agent-1',
        capability: 'payments.transfer',
        outcome: i === 7 ? 'DENY' : 'ALLOW',
        risk_score: 0.4,
        decision_id: `dec-${i}`,
        policies_evaluated: [],
        policy_matched: null,
        data: { amount: i },
      });
    }
    await audit.close();
    log = await readFile(fixtures.path('data/audit.jsonl'), 'utf8');
    checkpoints = await readFile(fixtures.path('data/checkpoints.json'), 'utf8');
  });

  async function verify(exported: string, checkpointText: string, key = vkey) {
    const id = Math.random().toString(36).slice(2);
    await writeFile(fixtures.path(`${id}.jsonl`), exported);
    await writeFile(fixtures.path(`${id}.json`), checkpointText);
    return runArbiter([
      'audit',
      'verify',
      fixtures.path(`${id}.jsonl`),
      '--checkpoint',
      fixtures.path(`${id}.json`),
      '--vkey',
      key,
    ]);
  }

  it('checks every signed checkpoint: its signature and the root of the entries up to it', async () => {
    const result = await verify(log, checkpoints);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('verified: 17 entries, head seq 17, 4 signed roots\n');
    expect(JSON.parse(result.stdout).signed_roots).toEqual({ ok: true, signed_checkpoints_checked: 4 });
  });

  it('refuses a history rewritten with its chain hashes and unsigned checkpoints, which the chain check alone accepts', async () => {
    // Whoever edits the files re-hashes the chain from the edit on and fixes the
    // checkpoints' hashes too, but cannot sign new roots.
    const entries = log
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    let previous: string | undefined;
    const rewritten = entries.map((entry) => {
      const edited = { ...entry, ...(entry.seq === 8 ? { outcome: 'ALLOW' as const } : {}) };
      if (previous !== undefined) edited.previous_hash = previous;
      edited.hash = hashEntry(edited);
      previous = edited.hash;
      return edited;
    });
    const text = `${rewritten.map((e) => storedText(e)).join('\n')}\n`;
    const document = JSON.parse(checkpoints) as { checkpoints: { seq: number; hash: string }[] };
    for (const c of document.checkpoints) c.hash = rewritten[c.seq - 1]!.hash;
    const forgedCheckpoints = JSON.stringify(document);
    const chainOnly = await runArbiter([
      'audit',
      'verify',
      await write('chain-only.jsonl', text),
      '--checkpoint',
      await write('chain-only.json', forgedCheckpoints),
    ]);
    expect(chainOnly.code, 'the chain check alone is fooled').toBe(0);
    const result = await verify(text, forgedCheckpoints);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'BROKEN: signed checkpoint at size 10: the entries up to seq 10 do not have the signed root\n',
    );
  });

  it('refuses checkpoints signed by another key', async () => {
    const result = await verify(
      log,
      checkpoints,
      formatVerifierKey(generateSigningKey('arbiter.test/prod-audit')),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^BROKEN: signed checkpoint at size 0: a checkpoint's signature does not verify/,
    );
  });

  it('needs the checkpoint file with --vkey', async () => {
    const result = await runArbiter(['audit', 'verify', await write('x.jsonl', log), '--vkey', vkey]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--vkey needs --checkpoint FILE');
  });

  async function write(name: string, text: string): Promise<string> {
    await writeFile(fixtures.path(name), text);
    return fixtures.path(name);
  }
});
