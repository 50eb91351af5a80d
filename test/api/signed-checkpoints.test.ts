import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
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

  it('refuses to start with a key file it cannot use, naming the file and the reason', async () => {
    const keys = await tempDir('arbiter-signing-');
    await writeFile(join(keys, 'public.vkey'), formatVerifierKey(generateSigningKey('a.test/log')));
    try {
      for (const [args, reason] of [
        [
          ['--audit-signing-key', join(keys, 'public.vkey')],
          /--audit-signing-key: .*public\.vkey: private key is not PRIVATE\+KEY/,
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
