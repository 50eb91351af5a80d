import { type AuditTree, TreeBeyondSizeError } from './audit-tree.js';
import type { Checkpoint, CheckpointStore } from './audit-log.js';
import type { AuditLogger } from './audit-logger.js';
import { lastSigned } from './checkpoint-shape.js';
import { formatCheckpoint, parseCheckpoint } from './note/checkpoint-note.js';
import { type NoteSigningKey, verifierOf } from './note/note-keys.js';
import { openNote, signNote } from './note/signed-note.js';
import { MissingNodeError } from './merkle/proof-hashes.js';
import { verifyConsistency } from './merkle/verify-consistency.js';
import type { CheckpointWitness } from './witnessing/checkpoint-witness.js';
import { gatherCosignatures, type WitnessFailed } from './witnessing/gather-cosignatures.js';

/** The key and origin line of a log's signed checkpoints. */
export interface CheckpointSigning {
  key: NoteSigningKey;
  /** First line of every checkpoint; defaults to the key's name. */
  origin: string;
  /** Witnesses asked to cosign each new signed checkpoint. */
  witnesses?: readonly CheckpointWitness[];
  /** Told of what must never be silent (the metrics). */
  events?: CheckpointEvents;
}

type SignedCheckpoint = Checkpoint & { note: string };

export interface CheckpointEvents {
  /** The signer would not sign: the tree does not extend the last signed checkpoint. */
  signingRefused?: () => void;
  /**
   * The signer could not check: the tree did not answer (Redis or the disk down). No
   * refusal and no alarm of a rewritten log; a later checkpoint is signed once it answers.
   */
  signingUnavailable?: () => void;
  witnessFailed?: WitnessFailed;
}

/** The signer would not sign: its tree does not extend the last signed checkpoint. */
export class CheckpointRefusedError extends Error {
  readonly code = 'checkpoint_refused';
}

/**
 * Signs C2SP checkpoints of the audit tree, and only ones that extend the last signed
 * checkpoint: that one's note must open with this key, and a consistency proof from its
 * size to the new one, read from the tree, must lead from its signed root to the new
 * root. A tree rewritten under the signer (Redis or the files edited) is refused here,
 * before a second history could ever be signed.
 */
export class CheckpointSigner {
  constructor(
    private readonly signing: CheckpointSigning,
    private readonly tree: AuditTree,
  ) {}

  async sign(head: Checkpoint, previous: Checkpoint | undefined): Promise<SignedCheckpoint> {
    let root;
    try {
      root = await this.tree.root(head.seq);
      if (previous?.note !== undefined) await this.checkExtends(previous.note, head.seq, root);
    } catch (err) {
      this.report(err);
      throw err;
    }
    const text = formatCheckpoint({ origin: this.signing.origin, size: head.seq, root });
    return { ...head, note: signNote(text, [this.signing.key]) };
  }

  /** Tells the refusals and the outages apart; a tree still catching up is neither. */
  private report(err: unknown): void {
    if (err instanceof CheckpointRefusedError) this.signing.events?.signingRefused?.();
    else if (!(err instanceof TreeBeyondSizeError)) this.signing.events?.signingUnavailable?.();
  }

  /** The witnesses' cosignature lines of a signed checkpoint (none when none cosigned). */
  cosign(signed: SignedCheckpoint, previous: Checkpoint | undefined, logger: AuditLogger) {
    const witnesses = this.signing.witnesses ?? [];
    if (witnesses.length === 0) return Promise.resolve([]);
    return gatherCosignatures(
      witnesses,
      { note: signed.note, size: signed.seq, previousSize: previous?.seq ?? 0, tree: this.tree },
      logger,
      this.signing.events?.witnessFailed,
    );
  }

  private async checkExtends(note: string, size: number, root: Buffer): Promise<void> {
    let previous;
    try {
      previous = parseCheckpoint(openNote(note, [verifierOf(this.signing.key)]).text);
    } catch (err) {
      throw new CheckpointRefusedError(
        `the last signed checkpoint does not open with this key: ${String(err)}`,
      );
    }
    if (previous.origin !== this.signing.origin) {
      throw new CheckpointRefusedError(
        `the last signed checkpoint is of origin ${previous.origin}, not ${this.signing.origin}`,
      );
    }
    if (previous.size > size) {
      throw new CheckpointRefusedError(
        `the last signed checkpoint has size ${previous.size}, beyond the head ${size}`,
      );
    }
    const notExtending = (err: unknown) =>
      new CheckpointRefusedError(
        `the tree at size ${size} does not extend the last signed checkpoint (size ${previous.size}): ${String(err)}`,
      );
    // A tree that lacks a node of the proof it claims to hold is refused; one that cannot be
    // read now (storage down) is no refusal: the error goes on, and a later checkpoint signs.
    let proof;
    try {
      proof = await this.tree.consistencyProof(previous.size, size);
    } catch (err) {
      throw err instanceof MissingNodeError ? notExtending(err) : err;
    }
    try {
      verifyConsistency(previous.size, size, proof, previous.root, root);
    } catch (err) {
      throw notExtending(err);
    }
  }
}

/**
 * Saves a checkpoint, signed when the log has a signer and cosigned by the witnesses
 * that would, compare-and-set on the last signed one. A refusal is an error in the log and
 * the checkpoint is kept unsigned (the chain checkpoint still bounds verification); a
 * lost race (CheckpointConflictError) reaches the caller, whose next checkpoint signs
 * from the new last one.
 */
export async function saveCheckpoint(
  store: CheckpointStore,
  checkpoint: Checkpoint,
  signer: CheckpointSigner | undefined,
  logger: AuditLogger,
): Promise<void> {
  if (signer === undefined) return store.save(checkpoint);
  const previous = lastSigned(await store.list());
  let signed: SignedCheckpoint;
  try {
    signed = await signer.sign(checkpoint, previous);
  } catch (err) {
    if (err instanceof TreeBeyondSizeError) {
      // The tree is still catching up with the chain: a later checkpoint gets signed.
      logger.warn(
        { err, seq: checkpoint.seq },
        'audit checkpoint saved unsigned: the Merkle tree has not reached it yet',
      );
      return store.save(checkpoint);
    }
    if (!(err instanceof CheckpointRefusedError)) throw err;
    logger.error(
      { err, seq: checkpoint.seq },
      'audit checkpoint NOT signed: the tree does not extend the last signed checkpoint',
    );
    return store.save(checkpoint);
  }
  // Witnessed before it is stored, so the checkpoint is served with its cosignatures.
  const cosignatures = await signer.cosign(signed, previous, logger);
  await store.save(cosignatures.length > 0 ? { ...signed, cosignatures } : signed, {
    previousNote: previous?.note ?? null,
  });
}
