import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint } from '../../src/audit/audit-log.js';
import { cosignedNote } from '../../src/audit/checkpoint-shape.js';
import { FileAuditLog, FileCheckpointStore } from '../../src/audit/file/index.js';
import { event } from '../../src/audit/file/test-fixtures.js';
import { parseSigningKey, parseVerifierKey } from '../../src/audit/note/note-keys.js';
import { formatTlogProof } from '../../src/audit/note/tlog-proof.js';
import { HttpWitness } from '../../src/audit/witnessing/http-witness.js';
import { CLI } from '../support/arbiter-process.js';
import { keygenWitness, type KeygenWitness } from '../support/keygen-witness.js';
import { type CliResult, runArbiter, useFixtureDir } from './support/cli-run.js';

/** The CLI, killed after `ms` (a witness that starts would serve until stopped). */
function runWithin(ms: number, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { timeout: ms, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const ORIGIN = 'arbiter.test/prod-audit';
const WITNESS = 'witness.security.example.com';

/**
 * A log key and a witness key as `arbiter audit keygen` makes them, a file log signed with
 * the one and cosigned over HTTP by a real witness server holding the other: the verifying
 * commands must take each key only for what it vouches for.
 */
describe('arbiter audit verify*: a log key verifies log signatures, a witness key only cosignatures', () => {
  const fixtures = useFixtureDir('arbiter-verify-key-roles-');
  let logVkey: string;
  let witnessVkey: string;
  let keys: KeygenWitness;
  let signed: (Checkpoint & { note: string })[];
  let entry: string;
  let proof: string;

  beforeAll(async () => {
    keys = await keygenWitness(fixtures.path(''), ORIGIN, WITNESS);
    ({ logVkey, witnessVkey } = keys);
    const witness = new HttpWitness({
      url: keys.witnessUrl,
      key: parseVerifierKey(witnessVkey),
    });
    const log = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 5, seconds: 3600 },
      retainCheckpoints: 10,
      signing: {
        key: parseSigningKey(await readFile(keys.logKeyFile, 'utf8')),
        origin: ORIGIN,
        witnesses: [witness],
      },
    });
    const entries: AuditEntry[] = [];
    for (let i = 0; i < 12; i++) {
      const timestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      entries.push(await log.append(event({ timestamp, decision_id: `dec-${i}`, data: { amount: i } })));
    }
    await log.close(); // the last checkpoint, at 12, signed and cosigned
    signed = (await new FileCheckpointStore({ dir: fixtures.path('data'), retain: 10 }).list()).filter(
      (c): c is Checkpoint & { note: string } => c.note !== undefined,
    );
    expect(signed.map((c) => [c.seq, c.cosignatures?.length])).toEqual([
      [5, 1],
      [10, 1],
      [12, 1],
    ]);
    const reopened = await FileAuditLog.open({
      dir: fixtures.path('data'),
      checkpointEvery: { entries: 1000, seconds: 3600 },
      retainCheckpoints: 10,
    });
    const hashes = await reopened.tree().inclusionProof(2, 12);
    proof = await fixtures.write(
      'entry.tlog-proof',
      formatTlogProof({ index: 2, hashes, checkpoint: cosignedNote(signed[2]!) }),
    );
    const consistency = await reopened.tree().consistencyProof(5, 12);
    await fixtures.write('consistency.txt', consistency.map((h) => `${h.toString('base64')}\n`).join(''));
    await reopened.close();
    entry = await fixtures.write('entry.json', JSON.stringify(entries[2]));
    await fixtures.write('old.note', cosignedNote(signed[0]!));
    await fixtures.write('new.note', cosignedNote(signed[2]!));
  });

  afterAll(async () => {
    await keys?.close();
  });

  const verifyProof = (...flags: string[]) =>
    runArbiter(['audit', 'verify-proof', '--entry', entry, '--proof', proof, ...flags]);

  it('verify-proof: the log key proves the entry, and the witness key as --witness-vkey counts its cosignature', async () => {
    const result = await verifyProof('--vkey', logVkey, '--witness-vkey', witnessVkey, '--quorum', '1');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `proven: entry seq 3 is leaf 2 of ${ORIGIN} at tree size 12, signed by ${ORIGIN}, cosigned by ${WITNESS}\n`,
    );
  });

  it('verify-proof refuses a witness key as --vkey (exit 2): a cosignature says the witness saw it, not that the log signed it', async () => {
    const result = await verifyProof('--vkey', witnessVkey);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `arbiter audit verify-proof: --vkey takes a log's verifier key (type 0x01); ${WITNESS} is a witness key (type 0x04): pass it with --witness-vkey (see arbiter audit verify-proof --help)\n`,
    );
    expect(result.code).toBe(2);
  });

  it('verify-proof refuses the log key as --witness-vkey (exit 2): the log cannot witness itself', async () => {
    const result = await verifyProof('--vkey', logVkey, '--witness-vkey', logVkey, '--quorum', '1');
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `arbiter audit verify-proof: --witness-vkey takes a witness's verifier key (type 0x04); ${ORIGIN} is a log key (type 0x01): pass it with --vkey (see arbiter audit verify-proof --help)\n`,
    );
    expect(result.code).toBe(2);
  });

  it('verify-proof reads the key files as it reads the keys, and refuses a witness key file as --vkey', async () => {
    const file = await fixtures.write('witness.vkey', `${witnessVkey}\n`);
    const result = await verifyProof('--vkey', file);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${WITNESS} is a witness key (type 0x04): pass it with --witness-vkey`);
  });

  const verifyConsistency = (vkey: string) =>
    runArbiter([
      'audit',
      'verify-consistency',
      '--vkey',
      vkey,
      '--proof',
      fixtures.path('consistency.txt'),
      fixtures.path('old.note'),
      fixtures.path('new.note'),
    ]);

  it('verify-consistency takes the log key, and refuses the witness key (exit 2)', async () => {
    const logResult = await verifyConsistency(logVkey);
    expect(logResult.code, logResult.stderr).toBe(0);
    expect(logResult.stdout).toBe(`consistent: ${ORIGIN} at size 12 extends size 5\n`);
    const witnessResult = await verifyConsistency(witnessVkey);
    expect(witnessResult.stdout).toBe('');
    expect(witnessResult.stderr).toBe(
      `arbiter audit verify-consistency: --vkey takes a log's verifier key (type 0x01); ${WITNESS} is a witness key (type 0x04), whose cosignature says the witness saw a checkpoint, not that the log signed it (see arbiter audit verify-consistency --help)\n`,
    );
    expect(witnessResult.code).toBe(2);
  });

  const verifyExport = (vkey: string) =>
    runArbiter([
      'audit',
      'verify',
      fixtures.path('data/audit.jsonl'),
      '--checkpoint',
      fixtures.path('data/checkpoints.json'),
      '--vkey',
      vkey,
    ]);

  it('verify --vkey takes the log key, and refuses the witness key (exit 2)', async () => {
    const logResult = await verifyExport(logVkey);
    expect(logResult.code, logResult.stderr).toBe(0);
    expect(logResult.stderr).toBe('verified: 12 entries, head seq 12, 3 signed roots\n');
    const witnessResult = await verifyExport(witnessVkey);
    expect(witnessResult.stdout).toBe('');
    expect(witnessResult.stderr).toBe(
      `arbiter audit verify: --vkey takes a log's verifier key (type 0x01); ${WITNESS} is a witness key (type 0x04), whose cosignature says the witness saw a checkpoint, not that the log signed it (see arbiter audit verify --help)\n`,
    );
    expect(witnessResult.code).toBe(2);
  });

  it('witness refuses a witness key as --log-vkey (exit 2): it must check the log signed what it cosigns', async () => {
    const result = await runWithin(20_000, [
      'witness',
      '--log-vkey',
      witnessVkey,
      '--key',
      keys.witnessKeyFile,
      '--state',
      fixtures.path('other-state.json'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
    ]);
    expect(result.stderr).toBe(
      `arbiter witness: --log-vkey takes a log's verifier key (type 0x01); ${WITNESS} is a witness key (type 0x04), whose cosignature says the witness saw a checkpoint, not that the log signed it (see arbiter witness --help)\n`,
    );
    expect(result.code).toBe(2);
  });
});
