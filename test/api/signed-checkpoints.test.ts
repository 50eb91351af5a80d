import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
  SIGNATURE_TYPE,
} from '../../src/audit/note/note-keys.js';
import { openNote } from '../../src/audit/note/signed-note.js';
import { serveRefusal } from '../cli/support/cli-run.js';
import { call, KEYS, removeDir, startArbiter, tempDir } from '../support/arbiter-process.js';

const PROPOSAL = {
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability: 'db.read', parameters: { table: 'orders' } },
};

describe('arbiter serve --audit-signing-key (embedded mode)', () => {
  it('signs every checkpoint of the audit tree with the key, under its name as origin', async () => {
    const keys = await tempDir('arbiter-signing-');
    const key = generateSigningKey('arbiter.test/embedded');
    await writeFile(join(keys, 'signing.key'), formatSigningKey(key), { mode: 0o600 });
    const arbiter = await startArbiter({
      args: ['--audit-signing-key', join(keys, 'signing.key'), '--checkpoint-entries', '3'],
    });
    try {
      for (let i = 0; i < 7; i++) {
        const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
          key: KEYS.agent,
          body: PROPOSAL,
        });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      expect(await arbiter.stop()).toBe(0);
      const { checkpoints } = JSON.parse(
        await readFile(join(arbiter.dataDir, 'checkpoints.json'), 'utf8'),
      ) as {
        checkpoints: { seq: number; note?: string }[];
      };
      const vkey = parseVerifierKey(formatVerifierKey(key));
      const bodies = checkpoints.map((c) => parseCheckpoint(openNote(c.note!, [vkey]).text));
      expect(bodies.map((b) => b.size)).toEqual(checkpoints.map((c) => c.seq));
      expect(bodies.at(-1)?.size).toBe(checkpoints.at(-1)?.seq);
      expect(new Set(bodies.map((b) => b.origin))).toEqual(new Set(['arbiter.test/embedded']));
      expect(arbiter.logs.some((line) => line.includes('audit checkpoints are signed'))).toBe(true);
    } finally {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
      await removeDir(arbiter.manifestsDir);
      await removeDir(keys);
    }
  });

  it('refuses to sign a rewritten log: an error in its log and arbiter_audit_checkpoint_signing_refusals_total', async () => {
    const keys = await tempDir('arbiter-signing-');
    await writeFile(
      join(keys, 'signing.key'),
      formatSigningKey(generateSigningKey('arbiter.test/embedded')),
      {
        mode: 0o600,
      },
    );
    const args = ['--audit-signing-key', join(keys, 'signing.key'), '--checkpoint-entries', '3'];
    const proposeSome = async (url: string) => {
      for (let i = 0; i < 7; i++) {
        const answer = await call(url, 'POST', '/api/v1/governance/propose', {
          key: KEYS.agent,
          body: PROPOSAL,
        });
        expect(answer.status).toBe(200);
      }
    };
    const first = await startArbiter({ args });
    let second: Awaited<ReturnType<typeof startArbiter>> | undefined;
    try {
      await proposeSome(first.url);
      expect(await first.stop()).toBe(0);
      // The history is replaced (log and tree deleted); the signed checkpoints stay.
      await rm(join(first.dataDir, 'audit.jsonl'));
      await rm(join(first.dataDir, 'audit.tree'));
      second = await startArbiter({ args, dataDir: first.dataDir, manifestsDir: first.manifestsDir });
      await proposeSome(second.url);
      const refusals = async () => {
        const metrics = String((await call(second!.url, 'GET', '/metrics')).body);
        return Number(/^arbiter_audit_checkpoint_signing_refusals_total (\d+)$/m.exec(metrics)?.[1] ?? 0);
      };
      await expect.poll(refusals, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      // A refusal is no outage: the unavailability counter, exported beside it, stays 0.
      expect(String((await call(second.url, 'GET', '/metrics')).body)).toMatch(
        /^arbiter_audit_checkpoint_signing_unavailable_total 0$/m,
      );
      expect(
        second.logs.some((line) =>
          line.includes('audit checkpoint NOT signed: the tree does not extend the last signed checkpoint'),
        ),
      ).toBe(true);
    } finally {
      await second?.stop();
      await first.stop();
      await removeDir(first.dataDir);
      await removeDir(first.manifestsDir);
      await removeDir(keys);
    }
  });

  it('refuses to start with a key file it cannot use, naming the file and the reason', async () => {
    const keys = await tempDir('arbiter-signing-');
    await writeFile(join(keys, 'public.vkey'), formatVerifierKey(generateSigningKey('a.test/log')));
    const witnessKey = generateSigningKey('w.test/witness', SIGNATURE_TYPE.cosignatureV1);
    await writeFile(join(keys, 'witness.key'), formatSigningKey(witnessKey), { mode: 0o600 });
    try {
      for (const [args, reason] of [
        [
          ['--audit-signing-key', join(keys, 'witness.key')],
          /--audit-signing-key: .*witness\.key holds w\.test\/witness, a witness key \(type 0x04\): a log signs its checkpoints with a log key \(arbiter audit keygen without --witness\)/,
        ],
        [
          ['--audit-signing-key', join(keys, 'public.vkey')],
          /--audit-signing-key: .*public\.vkey: private key does not start with PRIVATE\+KEY\+/,
        ],
        [
          ['--audit-signing-key', join(keys, 'missing.key')],
          /--audit-signing-key: cannot read .*missing\.key/,
        ],
        [['--audit-origin', 'a.test/log'], /--audit-origin needs --audit-signing-key FILE/],
      ] as const) {
        expect(await serveRefusal(keys, args)).toMatch(reason);
      }
    } finally {
      await removeDir(keys);
    }
  });
});
