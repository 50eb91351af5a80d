import type { AuditTree } from '../audit-tree.js';

/** Content type of a witness's 409 answer: the size it last cosigned (C2SP tlog-witness). */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

/** Why a witness did not cosign, as the failure metric's `reason` label says it. */
export type WitnessFailureReason =
  /** 409/422: the history the witness cosigned does not extend to this checkpoint. */
  | 'refused'
  /** Another 4xx: the witness does not know this log or key, or the request was bad. */
  | 'rejected'
  /** No answer in time, a network error, or a 5xx. */
  | 'unreachable'
  /** It answered 200 without a valid cosignature by its key. */
  | 'bad_cosignature'
  /** Ours: the proof for the witness could not be read from the tree. */
  | 'internal';

export class WitnessFailure extends Error {
  constructor(
    readonly witness: string,
    readonly reason: WitnessFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** What the signer sends a witness: the signed note, its tree, and where to prove from. */
export interface CosignRequest {
  /** The checkpoint note as the log signed it. */
  note: string;
  size: number;
  /** Size of the log's previous signed checkpoint: the witness's likely last size. */
  previousSize: number;
  tree: AuditTree;
}

/** One witness of the log's checkpoints (C2SP tlog-witness). */
export interface CheckpointWitness {
  /** The witness's key name, as its cosignature lines carry it. */
  readonly name: string;
  /** The witness's cosignature line(s) of the note; throws WitnessFailure. */
  cosign(request: CosignRequest): Promise<string>;
}
