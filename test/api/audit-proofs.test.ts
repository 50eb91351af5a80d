import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { verifyEntryProof } from '../../src/audit/entry-proof.js';
import { verifyConsistency } from '../../src/audit/merkle/verify-consistency.js';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
} from '../../src/audit/note/note-keys.js';
import { openNote } from '../../src/audit/note/signed-note.js';
import { parseTlogProof } from '../../src/audit/note/tlog-proof.js';
import { runArbiter } from '../cli/support/cli-run.js';
import {
  type ArbiterProcess,
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  useArbiter,
} from '../support/arbiter-process.js';

const PROPOSAL = {
  actor: { id: 'agent-001', type: 'ai-agent' },
  action: { capability: 'db.read', parameters: { table: 'orders' } },
};

describe('audit proofs over the API (embedded mode, signed checkpoints)', () => {
  const key = generateSigningKey('arbiter.test/api-audit');
  const vkey = parseVerifierKey(formatVerifierKey(key));
  let keys: string;
  let arbiter: ArbiterProcess;
  /** Sizes of the signed checkpoints, oldest first (the log also holds configuration events). */
  let signedSizes: number[];
  const get = (path: string, apiKey: string = KEYS.auditor) =>
    call(arbiter.url, 'GET', `/api/v1${path}`, { key: apiKey });

  beforeAll(async () => {
    keys = await tempDir('arbiter-proof-keys-');
    await writeFile(join(keys, 'signing.key'), formatSigningKey(key), { mode: 0o600 });
    const args = ['--audit-signing-key', join(keys, 'signing.key'), '--checkpoint-entries', '4'];
    const first = await startArbiter({ args });
    for (let i = 0; i < 9; i++) {
      const answer = await call(first.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: PROPOSAL,
      });
      expect(answer.status).toBe(200);
    }
    // A graceful stop writes the final checkpoint: none is pending after the restart.
    expect(await first.stop()).toBe(0);
    const stored = JSON.parse(await readFile(join(first.dataDir, 'checkpoints.json'), 'utf8')) as {
      checkpoints: { seq: number; note?: string }[];
    };
    signedSizes = stored.checkpoints.filter((c) => c.note).map((c) => c.seq);
    expect(signedSizes.length).toBeGreaterThanOrEqual(3);
    arbiter = await startArbiter({ args, dataDir: first.dataDir, manifestsDir: first.manifestsDir });
  });
  afterAll(async () => {
    await arbiter?.stop();
    await removeDir(arbiter?.dataDir);
    await removeDir(arbiter?.manifestsDir);
    await removeDir(keys);
  });

  async function entry(seq: number): Promise<AuditEntry> {
    const page = await get(`/audit/log?limit=200`);
    return (page.body.entries as AuditEntry[]).find((e) => e.seq === seq)!;
  }

  it('serves the latest signed checkpoint as text, the note as it was signed', async () => {
    const answer = await get('/audit/checkpoint');
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const body = parseCheckpoint(openNote(String(answer.body), [vkey]).text);
    expect(body.origin).toBe('arbiter.test/api-audit');
  });

  it('proves every entry against the latest signed checkpoint, as JSON and as a C2SP tlog-proof', async () => {
    const size = parseCheckpoint(openNote(String((await get('/audit/checkpoint')).body), [vkey]).text).size;
    for (let seq = 1; seq <= size; seq++) {
      const proof = await get(`/audit/proof/${seq}`);
      expect(proof.status).toBe(200);
      expect(proof.body).toMatchObject({ seq, leaf_index: seq - 1, tree_size: size });
      const tlog = await get(`/audit/proof/${seq}?format=tlog-proof`);
      const parsed = parseTlogProof(String(tlog.body));
      expect(parsed.hashes.map((h) => h.toString('base64'))).toEqual(proof.body.hashes);
      const stored = await entry(seq);
      expect(() => verifyEntryProof({ logKey: vkey, entry: stored, proof: parsed })).not.toThrow();
    }
  });

  it('proves against an older signed checkpoint with tree_size, and refuses sizes nobody signed', async () => {
    const first = signedSizes[0]!;
    const older = await get(`/audit/proof/1?tree_size=${first}`);
    expect(older.status).toBe(200);
    expect(parseCheckpoint(openNote(older.body.checkpoint as string, [vkey]).text).size).toBe(first);
    const unsigned = await get(`/audit/proof/1?tree_size=${first + 1}`);
    expect(unsigned.status).toBe(404);
    expect(unsigned.body.error.message).toBe(
      `no signed checkpoint of tree size ${first + 1}; signed sizes: ${signedSizes.join(', ')}`,
    );
  });

  it('answers bad requests with 400 and a message, never a 500', async () => {
    const first = signedSizes[0]!;
    for (const [path, message] of [
      ['/audit/proof/0', 'seq must be a whole number >= 1, not "0"'],
      ['/audit/proof/abc', 'seq must be a whole number >= 1, not "abc"'],
      ['/audit/proof/1?tree_size=-3', 'tree_size must be a whole number >= 1, not "-3"'],
      ['/audit/proof/1?format=xml', 'format must be json or tlog-proof, not "xml"'],
      [
        `/audit/proof/${first + 1}?tree_size=${first}`,
        `seq ${first + 1} is not in the tree of size ${first}`,
      ],
      ['/audit/consistency?from=8&to=4', 'from (8) must not be larger than to (4)'],
      ['/audit/consistency?from=1', 'to must be a whole number >= 0, not undefined'],
      [
        '/audit/consistency?from=1&to=99999999999999999999',
        'to must be a whole number >= 0, not "99999999999999999999"',
      ],
    ]) {
      const answer = await get(path!);
      expect(answer.status, path).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'INVALID_REQUEST', message });
    }
    const beyond = await get(`/audit/consistency?from=1&to=${signedSizes.at(-1)! + 1}`);
    expect(beyond.status).toBe(404);
    expect(beyond.body.error.message).toMatch(/^size \d+ is beyond the latest signed checkpoint/);
  });

  it('gives consistency proofs between signed sizes that verify against both signed roots', async () => {
    const [from, to] = [signedSizes[0]!, signedSizes.at(-1)!];
    const [older, newer] = await Promise.all(
      [from, to].map(async (size) =>
        parseCheckpoint(
          openNote((await get(`/audit/proof/1?tree_size=${size}`)).body.checkpoint as string, [vkey]).text,
        ),
      ),
    );
    const proof = await get(`/audit/consistency?from=${from}&to=${to}`);
    expect(proof.body).toMatchObject({ from, to });
    const hashes = (proof.body.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(() => verifyConsistency(from, to, hashes, older!.root, newer!.root)).not.toThrow();
    expect(() => verifyConsistency(from, to, hashes.slice(1), older!.root, newer!.root)).toThrow();
  });

  it('lets the CLI prove a served entry offline with nothing but the verifier key', async () => {
    await writeFile(join(keys, 'entry.json'), JSON.stringify(await entry(3)));
    await writeFile(
      join(keys, 'entry.tlog-proof'),
      String((await get('/audit/proof/3?format=tlog-proof')).body),
    );
    const result = await runArbiter([
      'audit',
      'verify-proof',
      '--vkey',
      formatVerifierKey(key),
      '--entry',
      join(keys, 'entry.json'),
      '--proof',
      join(keys, 'entry.tlog-proof'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^proven: entry seq 3 is leaf 2 of arbiter.test\/api-audit/);
  });

  it("adds the decision's inclusion proof to its trail's integrity, and null before a checkpoint covers it", async () => {
    const decided = await get('/audit/log?event_type=governance.decision&limit=1');
    const first = (decided.body.entries as AuditEntry[])[0]!;
    const trail = await get(`/audit/log/${first.decision_id}`);
    const proof = trail.body.integrity.inclusion_proof as {
      leaf_index: number;
      hashes: string[];
      checkpoint: string;
    };
    expect(proof).toMatchObject({ seq: first.seq, leaf_index: first.seq - 1, tree_size: signedSizes.at(-1) });
    const parsed = {
      index: proof.leaf_index,
      hashes: proof.hashes.map((h) => Buffer.from(h, 'base64')),
      checkpoint: proof.checkpoint,
    };
    expect(() => verifyEntryProof({ logKey: vkey, entry: first, proof: parsed })).not.toThrow();
    // A decision made after the last signed checkpoint has no proof yet.
    const fresh = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: PROPOSAL,
    });
    const freshTrail = await get(`/audit/log/${fresh.body.decision_id}`);
    expect(freshTrail.body.integrity.inclusion_proof).toBeNull();
  });

  it('needs the audit:read scope', async () => {
    expect((await get('/audit/checkpoint', KEYS.agent)).status).toBe(403);
    expect((await get('/audit/proof/1', KEYS.agent)).status).toBe(403);
  });
});

describe('audit proofs without a signing key', () => {
  const arbiter = useArbiter();

  it('says there is no signed checkpoint and how to get one', async () => {
    const answer = await call(arbiter.url, 'GET', '/api/v1/audit/checkpoint', { key: KEYS.auditor });
    expect(answer.status).toBe(404);
    expect(answer.body.error.message).toContain('serve with --audit-signing-key');
    expect((await call(arbiter.url, 'GET', '/api/v1/audit/proof/1', { key: KEYS.auditor })).status).toBe(404);
  });
});
