import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditTree } from '../../src/audit/audit-tree.js';
import { FileAuditLog, FileCheckpointStore } from '../../src/audit/file/index.js';
import { formatVerifierKey, generateSigningKey } from '../../src/audit/note/note-keys.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

describe('arbiter audit verify-consistency', () => {
  const fixtures = useFixtureDir('arbiter-verify-consistency-');
  const key = generateSigningKey('arbiter.test/prod-audit');
  const vkey = formatVerifierKey(key);
  const notes: Record<string, string[]> = {};
  const proofs: Record<string, (from: number, to: number) => Promise<Buffer[]>> = {};

  /** A signed file log of `count` entries with checkpoints every 10; its notes and a way to prove. */
  async function signedLog(name: string, count: number, origin = 'arbiter.test/prod-audit') {
    const dir = fixtures.path(name);
    const open = (signing?: { key: typeof key; origin: string }) =>
      FileAuditLog.open({
        dir,
        checkpointEvery: { entries: 10, seconds: 3600 },
        retainCheckpoints: 10,
        ...(signing ? { signing } : {}),
      });
    const log = await open({ key, origin });
    for (let i = 0; i < count; i++) {
      await log.append({
        event_type: 'governance.decision',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        actor_id: `agent-${name}`,
        capability: 'db.read',
        outcome: 'ALLOW',
        risk_score: 0.1,
        decision_id: `${name}-${i}`,
        policies_evaluated: [],
        policy_matched: null,
        data: {},
      });
    }
    await log.close();
    notes[name] = (await new FileCheckpointStore({ dir, retain: 10 }).list()).map((c) => c.note!);
    proofs[name] = async (from, to) => {
      const reopened = await open();
      const tree: AuditTree = reopened.tree();
      const proof = await tree.consistencyProof(from, to);
      await reopened.close();
      return proof;
    };
  }

  beforeAll(async () => {
    await signedLog('real', 25);
    await signedLog('rewritten', 25); // the same key, another history
    await signedLog('other-origin', 25, 'arbiter.test/staging-audit');
  });

  async function run(older: string, newer: string, proof: string, key = vkey) {
    const id = Math.random().toString(36).slice(2);
    await writeFile(fixtures.path(`${id}.old`), older);
    await writeFile(fixtures.path(`${id}.new`), newer);
    await writeFile(fixtures.path(`${id}.proof`), proof);
    return runArbiter([
      'audit',
      'verify-consistency',
      '--vkey',
      key,
      '--proof',
      fixtures.path(`${id}.proof`),
      fixtures.path(`${id}.old`),
      fixtures.path(`${id}.new`),
    ]);
  }

  const json = (from: number, to: number, hashes: Buffer[]) =>
    JSON.stringify({ from, to, hashes: hashes.map((h) => h.toString('base64')) });

  it('proves that the newest checkpoint extends an older one, from the endpoint JSON or hash lines', async () => {
    const [at10, , at25] = notes.real!;
    const proof = await proofs.real!(10, 25);
    const result = await run(at10!, at25!, json(10, 25, proof));
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('consistent: arbiter.test/prod-audit at size 25 extends size 10\n');
    expect((await run(at10!, at25!, proof.map((h) => h.toString('base64')).join('\n'))).code).toBe(0);
  });

  it('refuses a rewritten history signed with the same key, whichever tree the proof comes from', async () => {
    const realOld = notes.real![0]!;
    const rewrittenNew = notes.rewritten![2]!;
    for (const source of ['real', 'rewritten']) {
      const result = await run(realOld, rewrittenNew, json(10, 25, await proofs[source]!(10, 25)));
      expect(result.code, source).toBe(1);
      expect(result.stderr).toMatch(/^NOT CONSISTENT: the proof does not lead to the (older|newer) root/);
    }
  });

  it('refuses swapped checkpoints, a changed proof hash, another key and two origins', async () => {
    const [at10, , at25] = notes.real!;
    const proof = await proofs.real!(10, 25);
    expect((await run(at25!, at10!, json(10, 25, proof))).stderr).toContain('smaller than size');
    const changed = proof.map((h, i) => (i === 0 ? Buffer.from(h.map((b) => b ^ 1)) : h));
    expect((await run(at10!, at25!, json(10, 25, changed))).code).toBe(1);
    const other = formatVerifierKey(generateSigningKey('arbiter.test/prod-audit'));
    expect((await run(at10!, at25!, json(10, 25, proof), other)).stderr).toContain('trusted key');
    expect((await run(at10!, notes['other-origin']![2]!, json(10, 25, proof))).stderr).toContain(
      'two origins',
    );
  });
});
