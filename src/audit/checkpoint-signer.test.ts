import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Checkpoint } from './audit-log.js';
import type { AuditLogger } from './audit-logger.js';
import { StoredAuditTree, TreeBeyondSizeError } from './audit-tree.js';
import { CheckpointRefusedError, CheckpointSigner, saveCheckpoint } from './checkpoint-signer.js';
import { FileCheckpointStore } from './file/checkpoint-store.js';
import { tempDir } from './file/test-fixtures.js';
import { naiveRoot, numberedLeaves } from './merkle/test-naive-tree.js';
import { formatCheckpoint, parseCheckpoint } from './note/checkpoint-note.js';
import { generateSigningKey, verifierOf } from './note/note-keys.js';
import { openNote, signNote } from './note/signed-note.js';
import { MemoryNodeStore } from './test-node-store.js';

const ORIGIN = 'arbiter.test/log';
const key = generateSigningKey(ORIGIN);
const leaves = numberedLeaves(8);

const head = (seq: number): Checkpoint => ({
  seq,
  hash: `sha256:${String(seq).padStart(64, '0')}`,
  entry_id: `aud-${seq}`,
  time: '2025-01-01T00:00:00.000Z',
});

/** A checkpoint whose note signs `origin`, `size` and the root of `inputs` with `signer`. */
function signedBy(signer = key, size = 3, options: { origin?: string; inputs?: Buffer[] } = {}): Checkpoint {
  const root = naiveRoot((options.inputs ?? leaves).slice(0, size));
  return {
    ...head(size),
    note: signNote(formatCheckpoint({ origin: options.origin ?? ORIGIN, size, root }), [signer]),
  };
}

function signerOver(store: MemoryNodeStore) {
  const reports: string[] = [];
  const events = {
    signingRefused: () => reports.push('refused'),
    signingUnavailable: () => reports.push('unavailable'),
  };
  return {
    signer: new CheckpointSigner({ key, origin: ORIGIN, events }, new StoredAuditTree(store)),
    reports,
  };
}

describe('CheckpointSigner', () => {
  const { signer, reports } = signerOver(new MemoryNodeStore().append(leaves));
  beforeEach(() => {
    reports.length = 0;
  });

  it('signs the root of the tree at the head, extending the last signed checkpoint or its own size', async () => {
    for (const previous of [undefined, signedBy(key, 3), signedBy(key, 5), signedBy(key, 8)]) {
      const signed = await signer.sign(head(8), previous);
      const body = parseCheckpoint(openNote(signed.note, [verifierOf(key)]).text);
      expect(body).toMatchObject({ origin: ORIGIN, size: 8 });
      expect(body.root.equals(naiveRoot(leaves))).toBe(true);
      expect(signed).toMatchObject(head(8));
    }
    expect(await signer.cosign(await signer.sign(head(8), undefined), undefined, silent())).toEqual([]);
    expect(reports).toEqual([]);
  });

  it.each([
    [
      'opens with another key',
      () => signedBy(generateSigningKey(ORIGIN)),
      /^the last signed checkpoint does not open with this key: .+/,
    ],
    [
      'is of another origin',
      () => signedBy(key, 3, { origin: 'other.test/log' }),
      /^the last signed checkpoint is of origin other\.test\/log, not arbiter\.test\/log$/,
    ],
    [
      'is beyond the head',
      () => signedBy(key, 8),
      /^the last signed checkpoint has size 8, beyond the head 5$/,
    ],
    [
      'signs another history',
      () => signedBy(key, 3, { inputs: numberedLeaves(3).reverse() }),
      /^the tree at size 5 does not extend the last signed checkpoint \(size 3\): .+/,
    ],
  ])(
    'refuses to sign when the last signed checkpoint %s, and says so to its events',
    async (_name, previous, reason) => {
      const refusal = await signer.sign(head(5), previous()).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refusal).toBeInstanceOf(CheckpointRefusedError);
      expect(refusal).toMatchObject({
        code: 'checkpoint_refused',
        message: expect.stringMatching(reason) as unknown,
      });
      expect(reports).toEqual(['refused']);
    },
  );

  it('refuses a tree that lacks a node of the proof it claims to hold', async () => {
    const lacking = new MemoryNodeStore().append(leaves);
    lacking.lose({ level: 0, index: 2 }); // in the proof from 3 to 5, not in the root of 5
    const { signer: over, reports: refused } = signerOver(lacking);
    await expect(over.sign(head(5), signedBy(key, 3))).rejects.toMatchObject({
      code: 'checkpoint_refused',
      message:
        'the tree at size 5 does not extend the last signed checkpoint (size 3): Error: tree node 0:2 is not stored',
    });
    expect(refused).toEqual(['refused']);
  });

  it('passes on, as it is, a failure to read the proof: an outage is no refusal', async () => {
    const outage = new Error('tree storage unreachable');
    const flaky = new (class extends MemoryNodeStore {
      private reads = 0;
      override readNodes(nodes: Parameters<MemoryNodeStore['readNodes']>[0]) {
        this.reads += 1;
        return this.reads === 1 ? super.readNodes(nodes) : Promise.reject(outage); // the root, then the proof
      }
    })().append(leaves);
    const { signer: over, reports } = signerOver(flaky);
    await expect(over.sign(head(5), signedBy(key, 3))).rejects.toBe(outage);
    expect(reports).toEqual(['unavailable']);
  });

  it('says unavailable when the root cannot be read, and nothing for a tree still catching up', async () => {
    const broken = new MemoryNodeStore().append(leaves);
    broken.failure = new Error('tree storage unreachable');
    const { signer: over, reports: outageReports } = signerOver(broken);
    await expect(over.sign(head(5), undefined)).rejects.toBe(broken.failure);
    expect(outageReports).toEqual(['unavailable']);
    await expect(signer.sign(head(9), signedBy(key, 3))).rejects.toBeInstanceOf(TreeBeyondSizeError);
    expect(reports).toEqual([]);
  });
});

interface Logged {
  level: 'info' | 'warn' | 'error';
  details: object;
  message: string;
}

function silent(logged: Logged[] = []): AuditLogger {
  return {
    info: (details, message) => logged.push({ level: 'info', details, message }),
    warn: (details, message) => logged.push({ level: 'warn', details, message }),
    error: (details, message) => logged.push({ level: 'error', details, message }),
  };
}

describe('saveCheckpoint', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  const storeIn = () => new FileCheckpointStore({ dir, retain: 10 });

  it.each([
    [
      'a head the tree has not reached yet',
      9,
      undefined,
      'warn',
      TreeBeyondSizeError,
      'audit checkpoint saved unsigned: the Merkle tree has not reached it yet',
    ],
    [
      'a head its signer refuses',
      5,
      signedBy(key, 3, { inputs: numberedLeaves(3).reverse() }),
      'error',
      CheckpointRefusedError,
      'audit checkpoint NOT signed: the tree does not extend the last signed checkpoint',
    ],
  ] as const)('saves unsigned %s, and logs why', async (_name, seq, earlier, level, refusal, message) => {
    const store = storeIn();
    if (earlier) await store.save(earlier);
    const logged: Logged[] = [];
    await saveCheckpoint(
      store,
      head(seq),
      signerOver(new MemoryNodeStore().append(leaves)).signer,
      silent(logged),
    );
    expect((await store.list()).at(-1)).toEqual(head(seq));
    expect(logged).toEqual([{ level, details: { err: expect.any(refusal) as unknown, seq }, message }]);
  });

  it('saves nothing when the tree cannot be read, and passes the error on', async () => {
    const store = storeIn();
    const broken = new MemoryNodeStore().append(leaves);
    broken.failure = new Error('tree storage unreachable');
    await expect(saveCheckpoint(store, head(5), signerOver(broken).signer, silent())).rejects.toThrow(
      broken.failure,
    );
    expect(await store.list()).toEqual([]);
  });
});
