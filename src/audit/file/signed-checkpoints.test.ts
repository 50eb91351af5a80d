import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditLogger } from '../audit-logger.js';
import type { Checkpoint } from '../audit-log.js';
import { naiveRoot, referenceLeafInput } from '../merkle/test-naive-tree.js';
import { verifyConsistency } from '../merkle/verify-consistency.js';
import { parseCheckpoint } from '../note/checkpoint-note.js';
import { generateSigningKey, type NoteSigningKey, verifierOf } from '../note/note-keys.js';
import { openNote } from '../note/signed-note.js';
import { FileCheckpointStore } from './checkpoint-store.js';
import { AUDIT_LOG_FILE } from './file-audit-log.js';
import { event, openLog, readLogLines, tempDir } from './test-fixtures.js';
import { TREE_FILE } from './tree-file.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

const EVERY_TEN = { entries: 10, seconds: 3600 };

function recordingLogger() {
  const errors: string[] = [];
  const logger: AuditLogger = {
    info: () => undefined,
    warn: () => undefined,
    error: (_d, message) => errors.push(message),
  };
  return { logger, errors };
}

async function appendSequentially(log: Awaited<ReturnType<typeof openLog>>, count: number, tag = 'a') {
  for (let i = 0; i < count; i++) await log.append(event({ decision_id: `${tag}-${i}` }));
}

async function storedCheckpoints(): Promise<Checkpoint[]> {
  return new FileCheckpointStore({ dir, retain: 100 }).list();
}

/** What an auditor does: open each note with the vkey, take size and root from it alone. */
function signedBodies(checkpoints: Checkpoint[], key: NoteSigningKey) {
  return checkpoints
    .filter((c) => c.note)
    .map((c) => parseCheckpoint(openNote(c.note!, [verifierOf(key)]).text));
}

async function entryLeaves(): Promise<Buffer[]> {
  return (await readLogLines(dir))
    .filter((line) => line !== '')
    .map((line) => referenceLeafInput(JSON.parse(line) as object));
}

describe('signed checkpoints of the file audit log', () => {
  it('signs each checkpoint as a C2SP note whose size and root are the tree of the entries so far', async () => {
    const key = generateSigningKey('arbiter.test/audit');
    const log = await openLog(dir, {
      checkpointEvery: EVERY_TEN,
      signing: { key, origin: 'arbiter.test/audit' },
    });
    await appendSequentially(log, 25);
    await log.close();
    const checkpoints = await storedCheckpoints();
    const bodies = signedBodies(checkpoints, key);
    expect(bodies.map((b) => b.size)).toEqual(checkpoints.map((c) => c.seq));
    expect(bodies.map((b) => b.size)).toEqual([10, 20, 25]);
    expect(bodies.every((b) => b.origin === 'arbiter.test/audit')).toBe(true);
    const leaves = await entryLeaves();
    for (const body of bodies) expect(body.root.equals(naiveRoot(leaves.slice(0, body.size)))).toBe(true);
  });

  it('signs checkpoints that each extend the one before (a consistency proof from the tree verifies)', async () => {
    const key = generateSigningKey('arbiter.test/audit');
    const log = await openLog(dir, {
      checkpointEvery: EVERY_TEN,
      signing: { key, origin: 'arbiter.test/audit' },
    });
    await appendSequentially(log, 30);
    const bodies = signedBodies(await storedCheckpoints(), key);
    for (let i = 1; i < bodies.length; i++) {
      const [older, newer] = [bodies[i - 1]!, bodies[i]!];
      const proof = await log.tree().consistencyProof(older.size, newer.size);
      expect(() => verifyConsistency(older.size, newer.size, proof, older.root, newer.root)).not.toThrow();
    }
    await log.close();
  });

  it('refuses to sign a rewritten history: the log and tree replaced, the signed checkpoints kept', async () => {
    const key = generateSigningKey('arbiter.test/audit');
    const signing = { key, origin: 'arbiter.test/audit' };
    const first = await openLog(dir, { checkpointEvery: EVERY_TEN, signing });
    await appendSequentially(first, 10);
    await first.close();
    expect(signedBodies(await storedCheckpoints(), key).map((b) => b.size)).toEqual([10]);
    // Whoever can write the data directory rewrites the log from scratch, other entries.
    await rm(join(dir, AUDIT_LOG_FILE));
    await rm(join(dir, TREE_FILE));
    const { logger, errors } = recordingLogger();
    const second = await openLog(dir, { checkpointEvery: EVERY_TEN, signing, logger });
    await appendSequentially(second, 20, 'rewritten');
    await second.close();
    const checkpoints = await storedCheckpoints();
    // Checkpoints at 20 are kept (the chain's), but unsigned: one origin, one history.
    expect(checkpoints.map((c) => [c.seq, c.note !== undefined])).toEqual([
      [10, true],
      [20, false],
    ]);
    expect(errors).toContain(
      'audit checkpoint NOT signed: the tree does not extend the last signed checkpoint',
    );
  });

  it('refuses to sign after a checkpoint signed by another key of the same name', async () => {
    const signing = { key: generateSigningKey('arbiter.test/audit'), origin: 'arbiter.test/audit' };
    const first = await openLog(dir, { checkpointEvery: EVERY_TEN, signing });
    await appendSequentially(first, 10);
    await first.close();
    const { logger, errors } = recordingLogger();
    const other = { key: generateSigningKey('arbiter.test/audit'), origin: 'arbiter.test/audit' };
    const second = await openLog(dir, { checkpointEvery: EVERY_TEN, signing: other, logger });
    await appendSequentially(second, 10);
    await second.close();
    expect((await storedCheckpoints()).map((c) => c.note !== undefined)).toEqual([true, false]);
    expect(errors).toHaveLength(1);
  });
});

describe('the checkpoint store as compare-and-set on the last signed checkpoint', () => {
  const checkpoint = (seq: number, note?: string): Checkpoint => ({
    seq,
    hash: `sha256:${String(seq).padStart(64, '0')}`,
    entry_id: `aud_${seq}`,
    time: '2026-01-01T00:00:00.000Z',
    ...(note === undefined ? {} : { note }),
  });

  it('stores a signed checkpoint only if the newest signed one is still the one expected', async () => {
    const store = new FileCheckpointStore({ dir, retain: 10 });
    await store.save(checkpoint(10, 'note A\n'), { previousNote: null });
    await store.save(checkpoint(15)); // unsigned checkpoints do not move the expectation
    await expect(store.save(checkpoint(20, 'note B\n'), { previousNote: null })).rejects.toMatchObject({
      code: 'checkpoint_conflict',
    });
    await store.save(checkpoint(20, 'note B\n'), { previousNote: 'note A\n' });
    await expect(store.save(checkpoint(30, 'note C\n'), { previousNote: 'note A\n' })).rejects.toMatchObject({
      code: 'checkpoint_conflict',
    });
    expect((await store.list()).map((c) => c.seq)).toEqual([10, 15, 20]);
  });
});
