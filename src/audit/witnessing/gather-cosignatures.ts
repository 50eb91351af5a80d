import type { AuditLogger } from '../audit-logger.js';
import {
  type CheckpointWitness,
  type CosignRequest,
  WitnessFailure,
  type WitnessFailureReason,
} from './checkpoint-witness.js';

/** Told of each witness that did not cosign (the failure metric). */
export type WitnessFailed = (witness: string, reason: WitnessFailureReason) => void;

/**
 * Asks every witness at once and returns the cosignature lines of those that signed.
 * A witness that does not is an error in the log and a call of `failed`, never silent and
 * never fatal: the checkpoint stays signed by the log, only less witnessed.
 */
export async function gatherCosignatures(
  witnesses: readonly CheckpointWitness[],
  request: CosignRequest,
  logger: AuditLogger,
  failed: WitnessFailed = () => undefined,
): Promise<string[]> {
  const answers = await Promise.allSettled(witnesses.map((witness) => witness.cosign(request)));
  const lines: string[] = [];
  answers.forEach((answer, i) => {
    if (answer.status === 'fulfilled') {
      lines.push(answer.value);
      return;
    }
    const witness = witnesses[i]!.name;
    const err: unknown = answer.reason;
    const reason = err instanceof WitnessFailure ? err.reason : 'internal';
    failed(witness, reason);
    logger.error(
      { err, witness, reason, size: request.size },
      reason === 'refused'
        ? 'audit checkpoint REFUSED by a witness: its history does not extend to this one'
        : 'audit checkpoint not cosigned by a witness',
    );
  });
  return lines;
}
