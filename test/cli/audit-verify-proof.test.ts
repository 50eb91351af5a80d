import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { FileAuditLog, FileCheckpointStore } from '../../src/audit/file/index.js';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatVerifierKey,
  generateSigningKey,
  SIGNATURE_TYPE,
  verifierOf,
} from '../../src/audit/note/note-keys.js';
import { openNote, signatureLine } from '../../src/audit/note/signed-note.js';
import { formatTlogProof } from '../../src/audit/note/tlog-proof.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

/**
 * A signed file audit log built in this process; the CLI (dist/) then proves its
 * entries offline from files, as an auditor with only the verifier key would.
 */
describe('arbiter audit verify-proof', () => {
  const fixtures = useFixtureDir('arbiter-verify-proof-');
  const key = generateSigningKey('arbiter.test/prod-audit');
  const vkey = formatVerifierKey(key);
  let entries: AuditEntry[];
  let note: string;
  let proofOf: (seq: number) => Promise<string>;

  beforeAll(async () => {
    const log = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 1000, seconds: 3600 },
      retainCheckpoints: 10,
      signing: { key, origin: 'arbiter.test/prod-audit' },
    });
    entries = [];
    for (let i = 0; i < 21; i++) {
      entries.push(
        await log.append({
          event_type: 'governance.decision',
          timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
          actor_id: 'agent-1',
          capability: 'payments.transfer',
          outcome: i % 3 === 0 ? 'DENY' : 'ALLOW',
          risk_score: 0.5,
          decision_id: `dec-${i}`,
          policies_evaluated: ['p'],
          policy_matched: null,
          data: { amount: i * 100 },
        }),
      );
    }
    await log.close(); // the final checkpoint, signed, at size 21
    note = (await new FileCheckpointStore({ dir: fixtures.path('data'), retain: 10 }).list()).at(-1)!.note!;
    const reopened = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 1000, seconds: 3600 },
      retainCheckpoints: 10,
    });
    const size = parseCheckpoint(openNote(note, [verifierOf(key)]).text).size;
    const proofs = new Map<number, string>();
    for (const entry of entries) {
      const hashes = await reopened.tree().inclusionProof(entry.seq - 1, size);
      proofs.set(entry.seq, formatTlogProof({ index: entry.seq - 1, hashes, checkpoint: note }));
    }
    await reopened.close();
    proofOf = (seq) => Promise.resolve(proofs.get(seq)!);
  });

  async function files(entry: object, proof: string) {
    const name = `${Math.random().toString(36).slice(2)}`;
    await writeFile(fixtures.path(`${name}.json`), JSON.stringify(entry));
    await writeFile(fixtures.path(`${name}.tlog-proof`), proof);
    return ['--entry', fixtures.path(`${name}.json`), '--proof', fixtures.path(`${name}.tlog-proof`)];
  }

  it('proves an entry from its tlog-proof with nothing but the verifier key', async () => {
    const entry = entries[6]!;
    const result = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      vkey,
      ...(await files(entry, await proofOf(7))),
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'proven: entry seq 7 is leaf 6 of arbiter.test/prod-audit at tree size 21, signed by arbiter.test/prod-audit\n',
    );
  });

  it('accepts the JSON answer of the proof endpoint too, and a vkey file', async () => {
    const text = await proofOf(21);
    const lines = text.split('\n\n')[0]!.split('\n').slice(2);
    const json = { seq: 21, leaf_index: 20, tree_size: 21, hashes: lines, checkpoint: note };
    await writeFile(fixtures.path('log.vkey'), `${vkey}\n`);
    const result = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      fixtures.path('log.vkey'),
      ...(await files(entries[20]!, JSON.stringify(json))),
    ]);
    expect(result.code, result.stderr).toBe(0);
  });

  it.each([
    ['an altered entry (DENY made ALLOW)', () => ({ ...entries[3]!, outcome: 'ALLOW' }), 4, /different root/],
    ['another entry than the proof is for', () => entries[4]!, 4, /seq 5 but the proof is for leaf index 3/],
  ])('refuses %s (exit 1, the reason on stderr)', async (_what, entry, seq, reason) => {
    const result = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      vkey,
      ...(await files(entry(), await proofOf(seq))),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^NOT PROVEN: /);
    expect(result.stderr).toMatch(reason);
  });

  it('refuses a checkpoint signed by another key of the same name, and a forged root', async () => {
    const impostor = formatVerifierKey(generateSigningKey('arbiter.test/prod-audit'));
    const wrongKey = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      impostor,
      ...(await files(entries[0]!, await proofOf(1))),
    ]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('no signature on the note is by a trusted key');
    const forged = (await proofOf(1)).replace(
      /\n(\d+)\n([A-Za-z0-9+/=]+)\n\n/,
      (_m, size: string) => `\n${size}\n${Buffer.alloc(32).toString('base64')}\n\n`,
    );
    const forgedRoot = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      vkey,
      ...(await files(entries[0]!, forged)),
    ]);
    expect(forgedRoot.code).toBe(1);
    expect(forgedRoot.stderr).toContain('does not verify');
  });

  it('requires a quorum of witness cosignatures when witnesses are named', async () => {
    const witness = generateSigningKey('witness.test/w1', SIGNATURE_TYPE.cosignatureV1);
    const wvkey = formatVerifierKey(verifierOf(witness));
    const proof = await proofOf(2);
    const missing = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      vkey,
      '--witness-vkey',
      wvkey,
      ...(await files(entries[1]!, proof)),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('0 of the 1 witness cosignatures required');
    const text = openNote(note, [verifierOf(key)]).text;
    const cosigned = `${proof}${signatureLine(text, witness, 1_790_000_000)}`;
    const ok = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      vkey,
      '--witness-vkey',
      wvkey,
      '--quorum',
      '1',
      ...(await files(entries[1]!, cosigned)),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('cosigned by witness.test/w1');
  });

  it('says what it needs without arguments (exit 2)', async () => {
    const result = await runArbiter(['audit', 'verify-proof']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'arbiter audit verify-proof: --vkey, --entry and --proof are required (see arbiter audit verify-proof --help)\n',
    );
  });
});
