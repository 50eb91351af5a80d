import { describe, expect, it } from 'vitest';
import type { AuditEntry } from './audit-log.js';
import { sealEntry, storedText } from './chain.js';
import { verifyCheckpointConsistency } from './checkpoint-consistency.js';
import { verifyEntryProof } from './entry-proof.js';
import { event } from './file/test-fixtures.js';
import { naiveConsistency, naivePath, naiveRoot, referenceLeafInput } from './merkle/test-naive-tree.js';
import { formatCheckpoint } from './note/checkpoint-note.js';
import { generateSigningKey, SIGNATURE_TYPE, verifierOf, type NoteSigningKey } from './note/note-keys.js';
import { signatureLine, signNote } from './note/signed-note.js';
import { SignedRootChecker } from './signed-root-check.js';

// The offline checks of `arbiter audit verify-proof`, `verify-consistency` and `verify
// --vkey`, against a naive RFC 6962 tree (merkle/test-naive-tree.ts) as the reference.

const ORIGIN = 'arbiter.test/log';
const logKey = generateSigningKey(ORIGIN);
const otherKey = generateSigningKey(ORIGIN); // same name, another key
const witness = generateSigningKey('witness.test', SIGNATURE_TYPE.cosignatureV1);

function chain(count: number, change?: { seq: number; data: Record<string, unknown> }): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let seq = 1; seq <= count; seq += 1) {
    const data = change?.seq === seq ? change.data : { n: seq };
    entries.push(
      sealEntry({ id: `aud-${seq}`, ...event({ decision_id: `dec-${seq}`, data }) }, entries.at(-1) ?? null),
    );
  }
  return entries;
}

const entries = chain(13);
const inputs = entries.map(referenceLeafInput);

function checkpointNote(
  size: number,
  keys: NoteSigningKey[] = [logKey],
  options: { origin?: string; cosigned?: boolean } = {},
) {
  const text = formatCheckpoint({
    origin: options.origin ?? ORIGIN,
    size,
    root: naiveRoot(inputs.slice(0, size)),
  });
  return signNote(text, keys) + (options.cosigned ? signatureLine(text, witness, 1_700_000_000) : '');
}

function proofOf(index: number, size: number, checkpoint = checkpointNote(size)) {
  return { index, hashes: naivePath(index, inputs.slice(0, size)), checkpoint };
}

describe('verifyEntryProof: one entry in the signed log', () => {
  it('proves every entry into the signed tree, with its index from its seq', () => {
    for (const entry of entries) {
      const result = verifyEntryProof({
        logKey: verifierOf(logKey),
        entry,
        proof: proofOf(entry.seq - 1, 13),
      });
      expect(result).toMatchObject({
        leafIndex: entry.seq - 1,
        checkpoint: { origin: ORIGIN, size: 13 },
        cosignedBy: [],
      });
    }
  });

  it('counts the cosignatures of the given witnesses toward their quorum', () => {
    const cosigned = proofOf(4, 13, checkpointNote(13, [logKey], { cosigned: true }));
    const check = { logKey: verifierOf(logKey), entry: entries[4]!, proof: cosigned };
    expect(
      verifyEntryProof({ ...check, witnesses: { keys: [verifierOf(witness)], quorum: 1 } }).cosignedBy,
    ).toEqual(['witness.test']);
    expect(() =>
      verifyEntryProof({
        ...check,
        proof: proofOf(4, 13),
        witnesses: { keys: [verifierOf(witness)], quorum: 1 },
      }),
    ).toThrow('the checkpoint has 0 of the 1 witness cosignatures required');
    // A witness key that did not cosign does not count, even under the same name.
    const impostor = generateSigningKey('witness.test', SIGNATURE_TYPE.cosignatureV1);
    expect(() =>
      verifyEntryProof({ ...check, witnesses: { keys: [verifierOf(impostor)], quorum: 1 } }),
    ).toThrow(/0 of the 1/);
  });

  it('refuses a checkpoint the log key did not sign, a wrong index, an altered entry or proof', () => {
    const base = { logKey: verifierOf(logKey), entry: entries[2]! };
    expect(() =>
      verifyEntryProof({ ...base, proof: proofOf(2, 13, checkpointNote(13, [otherKey])) }),
    ).toThrow();
    expect(() => verifyEntryProof({ ...base, proof: proofOf(3, 13) })).toThrow(
      'the entry has seq 3 but the proof is for leaf index 3',
    );
    const altered = { ...entries[2]!, data: { n: 99 } };
    expect(() => verifyEntryProof({ ...base, entry: altered, proof: proofOf(2, 13) })).toThrow();
    const proof = proofOf(2, 13);
    const hashes = proof.hashes.map((h, i) => (i === 1 ? Buffer.from(h).fill(7, 0, 1) : h));
    expect(() => verifyEntryProof({ ...base, proof: { ...proof, hashes } })).toThrow();
    expect(() => verifyEntryProof({ ...base, proof: { ...proof, index: 2 } })).not.toThrow();
    expect(() => verifyEntryProof({ ...base, entry: { ...entries[2]!, seq: 1.5 }, proof })).toThrow(
      /seq 1.5/,
    );
  });

  it('wants the log key itself: a witness signature, even under the log name, neither signs nor cosigns', () => {
    const entry = entries[4]!;
    const namesake = generateSigningKey(ORIGIN, SIGNATURE_TYPE.cosignatureV1);
    const text = formatCheckpoint({ origin: ORIGIN, size: 13, root: naiveRoot(inputs) });
    for (const signer of [witness, namesake]) {
      const witnessOnly = proofOf(4, 13, `${text}\n${signatureLine(text, signer, 1_700_000_000)}`);
      expect(() =>
        verifyEntryProof({
          logKey: verifierOf(logKey),
          entry,
          proof: witnessOnly,
          witnesses: { keys: [verifierOf(signer)], quorum: 0 },
        }),
      ).toThrow(`the checkpoint is not signed by the log key ${ORIGIN}`);
    }
    // Signed by the log key alone: a witness key under the log's name does not count toward a quorum.
    expect(() =>
      verifyEntryProof({
        logKey: verifierOf(logKey),
        entry,
        proof: proofOf(4, 13),
        witnesses: { keys: [verifierOf(namesake)], quorum: 1 },
      }),
    ).toThrow('the checkpoint has 0 of the 1 witness cosignatures required');
  });

  it('takes size and root from the signed checkpoint only: a proof for a bigger tree fails', () => {
    const proof = { index: 2, hashes: naivePath(2, inputs.slice(0, 13)), checkpoint: checkpointNote(8) };
    expect(() => verifyEntryProof({ logKey: verifierOf(logKey), entry: entries[2]!, proof })).toThrow();
  });
});

describe('verifyCheckpointConsistency: a newer signed checkpoint extends an older one', () => {
  it('holds for every older size against the newest, with sizes and roots from the notes', () => {
    for (let m = 1; m <= 13; m += 1) {
      const result = verifyCheckpointConsistency(
        verifierOf(logKey),
        checkpointNote(m),
        checkpointNote(13),
        naiveConsistency(m, inputs),
      );
      expect([result.older.size, result.newer.size]).toEqual([m, 13]);
    }
  });

  it('refuses two origins, another signer, a wrong proof and swapped checkpoints', () => {
    const key = verifierOf(logKey);
    const proof = naiveConsistency(5, inputs);
    expect(() =>
      verifyCheckpointConsistency(
        key,
        checkpointNote(5),
        checkpointNote(13, [logKey], { origin: 'other.test/log' }),
        proof,
      ),
    ).toThrow('the checkpoints are of two origins: arbiter.test/log and other.test/log');
    expect(() =>
      verifyCheckpointConsistency(key, checkpointNote(5, [otherKey]), checkpointNote(13), proof),
    ).toThrow();
    expect(() =>
      verifyCheckpointConsistency(key, checkpointNote(5), checkpointNote(13, [otherKey]), proof),
    ).toThrow();
    expect(() => verifyCheckpointConsistency(key, checkpointNote(6), checkpointNote(13), proof)).toThrow();
    expect(() => verifyCheckpointConsistency(key, checkpointNote(13), checkpointNote(5), proof)).toThrow();
  });
});

describe('SignedRootChecker: an export against the signed roots it covers', () => {
  const lines = entries.map(storedText);

  function check(exportLines: string[], notes: string[]) {
    const checker = new SignedRootChecker(verifierOf(logKey), notes);
    exportLines.forEach((line) => checker.pushLine(line));
    return checker.finish();
  }

  it('recomputes the root at each signed size the export reaches', () => {
    expect(check(lines, [checkpointNote(13), checkpointNote(5), checkpointNote(1)])).toEqual({
      ok: true,
      signed_checkpoints_checked: 3,
    });
    const blanks = ['', ...lines.slice(0, 3), '  ', ...lines.slice(3, 6), '\t'];
    expect(check(blanks, [checkpointNote(5), checkpointNote(13)])).toEqual({
      ok: true,
      signed_checkpoints_checked: 1,
    });
  });

  it('catches a history rewritten with consistent chain hashes, at the first signed size after the change', () => {
    const rewritten = chain(13, { seq: 7, data: { n: 'rewritten' } }).map(storedText);
    expect(check(rewritten, [checkpointNote(5), checkpointNote(8), checkpointNote(13)])).toEqual({
      ok: false,
      signed_checkpoints_checked: 1,
      break: { size: 8, reason: 'the entries up to seq 8 do not have the signed root' },
    });
  });

  it('refuses a checkpoint whose signature does not verify, and recomputes nothing past a gap', () => {
    const forged = check(lines, [checkpointNote(5, [otherKey])]);
    expect(forged.ok).toBe(false);
    expect(forged.break?.size).toBe(0);
    expect(forged.break?.reason).toMatch(/^a checkpoint's signature does not verify: /);
    // An export from seq 2 (or one with a gap): no root can be recomputed; nothing is claimed.
    expect(check(lines.slice(1), [checkpointNote(5)])).toEqual({ ok: true, signed_checkpoints_checked: 0 });
    expect(check([...lines.slice(0, 3), ...lines.slice(4)], [checkpointNote(2), checkpointNote(13)])).toEqual(
      {
        ok: true,
        signed_checkpoints_checked: 1,
      },
    );
    expect(check(['not json', ...lines], [checkpointNote(5)])).toEqual({
      ok: true,
      signed_checkpoints_checked: 0,
    });
  });
});

describe('the log key and witness keys each verify only what they vouch for', () => {
  // A checkpoint the log signed and the witness cosigned: each key verifies its own line.
  const cosigned = (size: number) => checkpointNote(size, [logKey], { cosigned: true });
  const asWitness = {
    code: 'key_role',
    message: 'witness.test is a witness key (type 0x04), not a log key (type 0x01)',
  };
  const asLog = {
    code: 'key_role',
    message: `${ORIGIN} is a log key (type 0x01), not a witness key (type 0x04)`,
  };

  it('verifyEntryProof: a witness key as the log key, or the log key as a witness, is refused', () => {
    const check = { entry: entries[3]!, proof: proofOf(3, 13, cosigned(13)) };
    expect(() => verifyEntryProof({ ...check, logKey: verifierOf(witness) })).toThrow(
      expect.objectContaining(asWitness),
    );
    expect(() =>
      verifyEntryProof({
        ...check,
        logKey: verifierOf(logKey),
        witnesses: { keys: [verifierOf(logKey)], quorum: 1 },
      }),
    ).toThrow(expect.objectContaining(asLog));
    expect(
      verifyEntryProof({
        ...check,
        logKey: verifierOf(logKey),
        witnesses: { keys: [verifierOf(witness)], quorum: 1 },
      }).cosignedBy,
    ).toEqual(['witness.test']);
  });

  it('verifyCheckpointConsistency and SignedRootChecker refuse a witness key', () => {
    expect(() =>
      verifyCheckpointConsistency(
        verifierOf(witness),
        cosigned(5),
        cosigned(13),
        naiveConsistency(5, inputs),
      ),
    ).toThrow(expect.objectContaining(asWitness));
    expect(() => new SignedRootChecker(verifierOf(witness), [cosigned(13)])).toThrow(
      expect.objectContaining(asWitness),
    );
  });
});
