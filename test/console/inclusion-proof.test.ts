import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson as serverCanonicalJson } from '../../src/audit/chain.js';
import { leafHash as serverLeafHash } from '../../src/audit/merkle/tree-hash.js';
import { naivePath, naiveRoot, numberedLeaves } from '../../src/audit/merkle/test-naive-tree.js';
import { rootFromInclusionProof as serverRoot } from '../../src/audit/merkle/verify-inclusion.js';
import { formatCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  SIGNATURE_TYPE,
} from '../../src/audit/note/note-keys.js';
import { signatureLine, signNote } from '../../src/audit/note/signed-note.js';
import { canonicalJson } from '../../console/src/integrity/canonical-json.js';
import { rootFromInclusionProof } from '../../console/src/integrity/inclusion-proof.js';
import {
  checkNoteSignatures,
  checkSignatures,
  parseVerifierKey,
} from '../../console/src/integrity/verify-checkpoint-signature.js';
import {
  verifyEntryInclusion,
  type InclusionProofView,
} from '../../console/src/integrity/verify-entry-inclusion.js';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

// The console's proof checker runs in the browser on WebCrypto; Node's globalThis.crypto is
// the same API, so these tests run the very module the bundle ships.

const bytes = (b: Buffer) => new Uint8Array(b);
const serverRejects = (...args: Parameters<typeof serverRoot>) => {
  try {
    serverRoot(...args);
    return false;
  } catch {
    return true;
  }
};

describe('the browser Merkle check against the server code (RFC 6962 reference tree)', () => {
  it('leads every leaf of every tree up to 70 leaves to the reference root', async () => {
    for (let n = 1; n <= 70; n++) {
      const leaves = numberedLeaves(n);
      const root = naiveRoot(leaves);
      for (let m = 0; m < n; m++) {
        const path = naivePath(m, leaves).map(bytes);
        const computed = await rootFromInclusionProof(m, n, bytes(serverLeafHash(leaves[m]!)), path);
        expect(Buffer.from(computed).equals(root), `leaf ${m} of ${n}`).toBe(true);
      }
    }
  });

  it('agrees with the server verifier on tampered proofs: flipped bits, dropped or extra hashes, wrong index or size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.nat({ max: n - 1 }))),
        fc.constantFrom('flip', 'drop', 'extra', 'index', 'size', 'short-hash'),
        fc.nat(),
        async ([n, m], tamper, pick) => {
          const leaves = numberedLeaves(n);
          const root = naiveRoot(leaves);
          const leaf = serverLeafHash(leaves[m]!);
          let path = naivePath(m, leaves);
          let [index, size] = [m, n];
          const at = path.length === 0 ? 0 : pick % path.length;
          if (tamper === 'flip' && path.length > 0)
            path = path.map((h, i) =>
              i === at ? Buffer.from(h.map((b, j) => (j === pick % 32 ? b ^ 1 : b))) : h,
            );
          if (tamper === 'drop') path = path.filter((_, i) => i !== at);
          if (tamper === 'extra') path = [...path, root];
          if (tamper === 'index') index = (m + 1 + (pick % (n - 1))) % n;
          if (tamper === 'size') size = n + 1 + (pick % 5);
          if (tamper === 'short-hash' && path.length > 0)
            path = path.map((h, i) => (i === at ? h.subarray(1) : h));
          const browser = await rootFromInclusionProof(index, size, bytes(leaf), path.map(bytes)).then(
            (r) => Buffer.from(r).equals(root),
            () => false,
          );
          const server =
            !serverRejects(index, size, leaf, path) && serverRoot(index, size, leaf, path).equals(root);
          expect(browser).toBe(server);
          // A larger size can share the leaf's path (leaf 0 of 5 or of 6 leaves): the size
          // is taken from the signed checkpoint, never from the proof, for that reason.
          if (tamper !== 'size') expect(browser).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses impossible indices and sizes', async () => {
    const leaf = new Uint8Array(32);
    await expect(rootFromInclusionProof(-1, 4, leaf, [])).rejects.toThrow(/not a valid number/);
    await expect(rootFromInclusionProof(4, 4, leaf, [])).rejects.toThrow(/beyond tree size/);
    await expect(rootFromInclusionProof(0, 2 ** 53, leaf, [])).rejects.toThrow(/not a valid number/);
    await expect(rootFromInclusionProof(0.5, 4, leaf, [])).rejects.toThrow(/not a valid number/);
  });

  it('writes canonical JSON exactly as the server hashes it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(serverCanonicalJson(value));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the browser check of checkpoint signatures: each key verifies only what it vouches for', () => {
  const log = generateSigningKey('arbiter.test/log');
  const witness = generateSigningKey('witness.test/w1', SIGNATURE_TYPE.cosignatureV1);
  const text = formatCheckpoint({ origin: 'arbiter.test/log', size: 3, root: naiveRoot(numberedLeaves(3)) });
  const cosignature = signatureLine(text, witness, 1_790_000_000);
  const note = `${signNote(text, [log])}${cosignature}`;
  const vkeys = { log: formatVerifierKey(log), witness: formatVerifierKey(witness) };

  it("says signed for the log key's signature, cosigned for the witness key's, and unverified without a trusted key", async () => {
    expect(await checkNoteSignatures(note, [])).toEqual([
      { name: 'arbiter.test/log', status: 'unverified' },
      { name: 'witness.test/w1', status: 'unverified' },
    ]);
    expect(await checkNoteSignatures(note, [vkeys.witness])).toEqual([
      { name: 'arbiter.test/log', status: 'unverified' },
      { name: 'witness.test/w1', status: 'cosigned' },
    ]);
    expect(await checkNoteSignatures(note, [vkeys.log, vkeys.witness])).toEqual([
      { name: 'arbiter.test/log', status: 'signed' },
      { name: 'witness.test/w1', status: 'cosigned' },
    ]);
  });

  it('calls a cosignature invalid when it fails: altered time, or cut to the length of a plain signature', async () => {
    const payload = Buffer.from(cosignature.trim().split(' ').at(-1)!, 'base64');
    const line = (bytes: Buffer) => `\u2014 witness.test/w1 ${bytes.toString('base64')}\n`;
    const laterTime = Buffer.from(payload);
    laterTime[11] = laterTime[11]! ^ 1; // the last byte of the timestamp
    const cut = Buffer.concat([payload.subarray(0, 4), payload.subarray(12)]);
    for (const bytes of [laterTime, cut]) {
      expect(await checkNoteSignatures(`${signNote(text, [log])}${line(bytes)}`, [vkeys.witness])).toEqual([
        { name: 'arbiter.test/log', status: 'unverified' },
        { name: 'witness.test/w1', status: 'invalid' },
      ]);
    }
  });
});

describe('the browser check of real entries and proofs served by arbiter', () => {
  let arbiter: ArbiterProcess;
  let keys: string;
  const key = generateSigningKey('arbiter.test/console-proofs');
  let entries: ({ seq: number; hash: string } & Record<string, unknown>)[];
  let proofs: InclusionProofView[];
  let treeSize: number;

  beforeAll(async () => {
    keys = await tempDir('arbiter-console-proofs-');
    await writeFile(join(keys, 'signing.key'), formatSigningKey(key), { mode: 0o600 });
    arbiter = await startArbiter({
      args: ['--audit-signing-key', join(keys, 'signing.key'), '--checkpoint-entries', '10'],
    });
    for (let i = 0; i < 9; i++) {
      const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: {
            capability: 'database.query',
            parameters: { query: `select ${i}`, note: 'ünïcode ✓ "quoted"' },
          },
        },
      });
      expect(answer.status).toBe(200);
    }
    // The configuration events of the manifests come first: prove every entry the latest
    // signed checkpoint covers.
    const listed = await call(arbiter.url, 'GET', '/api/v1/audit/checkpoints', { key: KEYS.admin });
    treeSize = listed.body.checkpoints.find((c: { note: string | null }) => c.note !== null).seq;
    const log = await call(arbiter.url, 'GET', `/api/v1/audit/log?limit=${treeSize}`, { key: KEYS.admin });
    entries = log.body.entries;
    proofs = await Promise.all(
      entries.map(
        async (e) =>
          (await call(arbiter.url, 'GET', `/api/v1/audit/proof/${e.seq}`, { key: KEYS.admin })).body,
      ),
    );
    expect(proofs.every((p) => p.tree_size === treeSize)).toBe(true);
  });

  afterAll(async () => {
    await arbiter?.stop();
    await removeDir(arbiter?.dataDir ?? '');
    await removeDir(arbiter?.manifestsDir ?? '');
    await removeDir(keys ?? '');
  });

  it('accepts every entry with its proof, and the log key signature on the checkpoint', async () => {
    const vkey = await parseVerifierKey(formatVerifierKey(key));
    for (const [i, entry] of entries.entries()) {
      const checkpoint = await verifyEntryInclusion(entry, proofs[i]!);
      expect([checkpoint.origin, checkpoint.size]).toEqual(['arbiter.test/console-proofs', treeSize]);
      expect(await checkSignatures(checkpoint, [vkey])).toEqual([
        { name: 'arbiter.test/console-proofs', status: 'signed' },
      ]);
    }
  });

  it('rejects an altered entry, a proof for another entry, and a checkpoint whose root or size was changed', async () => {
    const [entry, proof] = [entries[2]!, proofs[2]!];
    const altered = { ...entry, data: { ...(entry.data as object), injected: true } };
    await expect(verifyEntryInclusion(altered, proof)).rejects.toThrow(/altered/);
    // Re-hashed to look consistent, the altered entry is still not in the tree.
    const { hash: _drop, ...content } = altered;
    const rehashed = {
      ...altered,
      hash: `sha256:${Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(content)))).toString('hex')}`,
    };
    await expect(verifyEntryInclusion(rehashed, proof)).rejects.toThrow(/root other than/);
    await expect(verifyEntryInclusion(entry, proofs[3]!)).rejects.toThrow(
      /seq 3 but the proof is for leaf 3/,
    );
    const otherRoot = Buffer.alloc(32, 7).toString('base64');
    const lines = proof.checkpoint.split('\n');
    const forgedRoot = [lines[0], lines[1], otherRoot, ...lines.slice(3)].join('\n');
    await expect(verifyEntryInclusion(entry, { ...proof, checkpoint: forgedRoot })).rejects.toThrow(
      /root other than/,
    );
    const forgedSize = [lines[0], String(treeSize + 1), ...lines.slice(2)].join('\n');
    await expect(verifyEntryInclusion(entry, { ...proof, checkpoint: forgedSize })).rejects.toThrow(
      `tree size ${treeSize} but the checkpoint is of size ${treeSize + 1}`,
    );
    await expect(verifyEntryInclusion(entry, { ...proof, checkpoint: 'not a note' })).rejects.toThrow(
      /not a signed note/,
    );
    await expect(verifyEntryInclusion(entry, { ...proof, hashes: [...proof.hashes, '!!!'] })).rejects.toThrow(
      /base64/,
    );
  });

  it('rejects a checkpoint whose signed text was changed under a trusted key, and ignores keys that did not sign', async () => {
    const vkey = await parseVerifierKey(formatVerifierKey(key));
    const stranger = await parseVerifierKey(formatVerifierKey(generateSigningKey('someone.else/log')));
    const checkpoint = await verifyEntryInclusion(entries[0]!, proofs[0]!);
    expect(await checkSignatures(checkpoint, [stranger])).toEqual([
      { name: 'arbiter.test/console-proofs', status: 'unverified' },
    ]);
    const tampered = {
      ...checkpoint,
      text: checkpoint.text.replace(`\n${treeSize}\n`, `\n${treeSize - 1}\n`),
    };
    expect(await checkSignatures(tampered, [vkey])).toEqual([
      { name: 'arbiter.test/console-proofs', status: 'invalid' },
    ]);
    await expect(parseVerifierKey('arbiter.test+00000000+AQ==')).rejects.toThrow();
  });
});
