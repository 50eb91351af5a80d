import { HASH_BYTES, type TreeHash } from '../audit/merkle/tree-hash.js';
import { verifyConsistency } from '../audit/merkle/verify-consistency.js';
import { type CheckpointBody, parseCheckpoint } from '../audit/note/checkpoint-note.js';
import type { NoteVerifierKey } from '../audit/note/note-keys.js';
import { openNote, splitNote } from '../audit/note/signed-note.js';

/** A C2SP tlog-witness add-checkpoint request body, parsed. */
export interface AddCheckpointRequest {
  oldSize: number;
  proof: TreeHash[];
  /** The checkpoint note as submitted (it may carry several signatures). */
  note: string;
}

/** The latest checkpoint a witness cosigned for one origin. */
export interface WitnessedCheckpoint {
  size: number;
  root: TreeHash;
}

/** What the witness answers: the status of tlog-witness and, on success, what to cosign and persist. */
export type AddCheckpointOutcome =
  | { status: 200; checkpoint: CheckpointBody; text: string }
  | { status: 400 | 403 | 404 | 422; message: string }
  | { status: 409; size: number; message: string };

const MAX_PROOF_LINES = 63;

export class BadRequestError extends Error {}

/** Parses the body: `old N`, up to 63 base64 hashes, an empty line, the checkpoint note. */
export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const split = body.indexOf('\n\n');
  if (split < 0) throw new BadRequestError('no empty line before the checkpoint');
  const lines = body.slice(0, split).split('\n');
  const match = /^old (0|[1-9][0-9]{0,15})$/.exec(lines.shift() ?? '');
  if (!match) throw new BadRequestError('the first line must be "old SIZE"');
  if (lines.length > MAX_PROOF_LINES)
    throw new BadRequestError(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  const proof = lines.map((line, i) => {
    const hash = Buffer.from(line, 'base64');
    if (hash.length !== HASH_BYTES || hash.toString('base64') !== line) {
      throw new BadRequestError(`consistency proof line ${i + 1} is not the base64 of 32 bytes`);
    }
    return hash;
  });
  return { oldSize: Number(match[1]), proof, note: body.slice(split + 2) };
}

/**
 * The witness's decision on one request, in the order C2SP tlog-witness gives: a known
 * origin (404), a valid signature by one of its keys (403), old size not above the new
 * one (400), old size equal to what was last cosigned (409 with that size), equal roots
 * for equal sizes (409), and a consistency proof from the last cosigned root (422).
 */
export function decideAddCheckpoint(
  request: AddCheckpointRequest,
  logKeys: ReadonlyMap<string, readonly NoteVerifierKey[]>,
  latest: WitnessedCheckpoint | undefined,
): AddCheckpointOutcome {
  const read = readSignedCheckpoint(request.note, logKeys);
  if ('status' in read) return read;
  const refusal = checkExtends(request, read.checkpoint, latest);
  return refusal ?? { status: 200, checkpoint: read.checkpoint, text: read.text };
}

/** The checkpoint of a known origin, signed by one of its keys. */
function readSignedCheckpoint(
  note: string,
  logKeys: ReadonlyMap<string, readonly NoteVerifierKey[]>,
): { checkpoint: CheckpointBody; text: string } | AddCheckpointOutcome {
  let text: string;
  let checkpoint: CheckpointBody;
  try {
    text = splitNote(note).text;
    checkpoint = parseCheckpoint(text);
  } catch (err) {
    return { status: 400, message: (err as Error).message };
  }
  const keys = logKeys.get(checkpoint.origin);
  if (!keys) return { status: 404, message: `unknown log origin ${checkpoint.origin}` };
  try {
    openNote(note, keys);
  } catch (err) {
    return {
      status: 403,
      message: `the checkpoint is not signed by a key of ${checkpoint.origin}: ${(err as Error).message}`,
    };
  }
  return { checkpoint, text };
}

/** Why the checkpoint does not extend the latest cosigned one, or undefined when it does. */
function checkExtends(
  request: AddCheckpointRequest,
  checkpoint: CheckpointBody,
  latest: WitnessedCheckpoint | undefined,
): AddCheckpointOutcome | undefined {
  if (request.oldSize > checkpoint.size) {
    return {
      status: 400,
      message: `old size ${request.oldSize} is larger than the checkpoint size ${checkpoint.size}`,
    };
  }
  const cosignedSize = latest?.size ?? 0;
  if (request.oldSize !== cosignedSize) {
    return { status: 409, size: cosignedSize, message: `the latest cosigned size is ${cosignedSize}` };
  }
  if (latest === undefined || latest.size === 0) {
    return request.proof.length > 0
      ? { status: 422, message: 'the consistency proof from size 0 must be empty' }
      : undefined;
  }
  if (latest.size === checkpoint.size && !latest.root.equals(checkpoint.root)) {
    return { status: 409, size: cosignedSize, message: 'same size, another root: a fork of the log' };
  }
  try {
    verifyConsistency(latest.size, checkpoint.size, request.proof, latest.root, checkpoint.root);
  } catch (err) {
    return { status: 422, message: `the consistency proof does not hold: ${(err as Error).message}` };
  }
  return undefined;
}
