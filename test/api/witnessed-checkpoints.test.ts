import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
  SIGNATURE_TYPE,
} from '../../src/audit/note/note-keys.js';
import { openNote } from '../../src/audit/note/signed-note.js';
import { runArbiter, serveRefusal } from '../cli/support/cli-run.js';
import {
  type ArbiterProcess,
  call,
  CLI,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
} from '../support/arbiter-process.js';

const PROPOSAL = {
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability: 'db.read', parameters: { table: 'orders' } },
};

/** `arbiter witness` as its operator runs it, on a free port. */
async function startWitness(dir: string, logVkeyFile: string) {
  const keygen = await runArbiter([
    'audit',
    'keygen',
    '--witness',
    '--origin',
    'witness.test/security',
    '--out',
    join(dir, 'witness.key'),
  ]);
  expect(keygen.code, keygen.stderr).toBe(0);
  await writeFile(join(dir, 'witness.vkey'), keygen.stdout);
  const child = spawn(process.execPath, [
    CLI,
    'witness',
    '--log-vkey',
    logVkeyFile,
    '--key',
    join(dir, 'witness.key'),
    '--state',
    join(dir, 'witness-state.json'),
    '--port',
    '0',
    '--host',
    '127.0.0.1',
  ]);
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      logs.push(line);
      const record = JSON.parse(line) as { msg: string; port: number };
      if (record.msg === 'witness listening') resolve(record.port);
    });
    void exited.then((code) => reject(new Error(`witness exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    vkeyFile: join(dir, 'witness.vkey'),
    vkey: parseVerifierKey(keygen.stdout.trim()),
    logs,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function propose(arbiter: ArbiterProcess, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: PROPOSAL,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }
}

describe('arbiter serve --witness URL --witness-vkey VKEY (embedded mode, a real arbiter witness)', () => {
  const key = generateSigningKey('arbiter.test/witnessed');
  let dir: string;
  let witness: Awaited<ReturnType<typeof startWitness>>;
  const running: ArbiterProcess[] = [];

  beforeAll(async () => {
    dir = await tempDir('arbiter-witnessed-');
    await writeFile(join(dir, 'signing.key'), formatSigningKey(key), { mode: 0o600 });
    await writeFile(join(dir, 'log.vkey'), formatVerifierKey(key));
    witness = await startWitness(dir, join(dir, 'log.vkey'));
  });
  afterAll(async () => {
    for (const arbiter of running) {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
      await removeDir(arbiter.manifestsDir);
    }
    await witness?.stop();
    await removeDir(dir);
  });

  const serve = async (dataDir?: string) => {
    const arbiter = await startArbiter({
      ...(dataDir ? { dataDir } : {}),
      args: [
        '--audit-signing-key',
        join(dir, 'signing.key'),
        '--checkpoint-entries',
        '3',
        '--witness',
        witness.url,
        '--witness-vkey',
        witness.vkeyFile,
      ],
    });
    running.push(arbiter);
    return arbiter;
  };

  it('serves the checkpoint with the witness cosignature, and verify-proof --quorum 1 accepts its proofs', async () => {
    const arbiter = await serve();
    await propose(arbiter, 7);
    // The checkpoint is cosigned off the request path: wait for it.
    let note = '';
    await expect
      .poll(
        async () => {
          const answer = await call(arbiter.url, 'GET', '/api/v1/audit/checkpoint', { key: KEYS.auditor });
          note = String(answer.body);
          return answer.status === 200 && note.includes('witness.test/security');
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    expect(openNote(note, [witness.vkey]).verified.map((s) => s.name)).toEqual(['witness.test/security']);
    const proof = await call(arbiter.url, 'GET', '/api/v1/audit/proof/2?format=tlog-proof', {
      key: KEYS.auditor,
    });
    expect(proof.status).toBe(200);
    const entries = await call(arbiter.url, 'GET', '/api/v1/audit/log?limit=100', { key: KEYS.auditor });
    const entry = (entries.body as { entries: { seq: number }[] }).entries.find((e) => e.seq === 2);
    await writeFile(join(dir, 'proof.txt'), String(proof.body));
    await writeFile(join(dir, 'entry.json'), JSON.stringify(entry));
    const verify = (extra: string[]) =>
      runArbiter([
        'audit',
        'verify-proof',
        '--vkey',
        join(dir, 'log.vkey'),
        '--entry',
        join(dir, 'entry.json'),
        '--proof',
        join(dir, 'proof.txt'),
        ...extra,
      ]);
    const proven = await verify(['--witness-vkey', witness.vkeyFile, '--quorum', '1']);
    expect(proven.code, proven.stderr).toBe(0);
    expect(proven.stdout).toMatch(/cosigned by witness\.test\/security/);
    // A witness key that never cosigned does not make the quorum.
    const other = formatVerifierKey(generateSigningKey('witness.test/other', SIGNATURE_TYPE.cosignatureV1));
    const unproven = await verify(['--witness-vkey', other, '--quorum', '1']);
    expect(unproven.code).toBe(1);
    const metrics = String((await call(arbiter.url, 'GET', '/metrics')).body);
    expect(metrics).not.toMatch(/^arbiter_audit_witness_failures_total\{/m);
    expect(await arbiter.stop()).toBe(0);
  });

  it('a rewritten history (same key, another log) is refused by the witness: logged and counted, never cosigned', async () => {
    const forged = await serve();
    await propose(forged, 7);
    const failures = async () => {
      const metrics = String((await call(forged.url, 'GET', '/metrics')).body);
      const match =
        /^arbiter_audit_witness_failures_total\{witness="witness\.test\/security",reason="refused"\} (\d+)$/m.exec(
          metrics,
        );
      return Number(match?.[1] ?? 0);
    };
    await expect.poll(failures, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const checkpoint = await call(forged.url, 'GET', '/api/v1/audit/checkpoint', { key: KEYS.auditor });
    expect(checkpoint.status).toBe(200);
    expect(String(checkpoint.body)).not.toContain('witness.test/security');
    expect(
      forged.logs.some((line) =>
        line.includes('audit checkpoint REFUSED by a witness: its history does not extend to this one'),
      ),
    ).toBe(true);
  });

  it('refuses to start with witness flags it cannot use, naming the flag and the reason', async () => {
    await writeFile(join(dir, 'log-as-witness.vkey'), formatVerifierKey(generateSigningKey('a.test/log')));
    for (const [args, reason] of [
      [
        ['--witness', witness.url, '--witness-vkey', witness.vkeyFile],
        /--witness needs --audit-signing-key FILE/,
      ],
      [
        ['--audit-signing-key', join(dir, 'signing.key'), '--witness', witness.url],
        /1 --witness but 0 --witness-vkey/,
      ],
      [
        [
          '--audit-signing-key',
          join(dir, 'signing.key'),
          '--witness',
          'ftp://x',
          '--witness-vkey',
          witness.vkeyFile,
        ],
        /--witness: "ftp:\/\/x" is not an http\(s\) URL/,
      ],
      [
        [
          '--audit-signing-key',
          join(dir, 'signing.key'),
          '--witness',
          witness.url,
          '--witness-vkey',
          join(dir, 'log-as-witness.vkey'),
        ],
        /--witness-vkey takes a witness's verifier key \(type 0x04\); a\.test\/log is a log key \(type 0x01\), whose signature says the log signed a checkpoint, not that a witness saw it \(make one with arbiter audit keygen --witness\)/,
      ],
    ] as const) {
      expect(await serveRefusal(dir, args)).toMatch(reason);
    }
  });
});
