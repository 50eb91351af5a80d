import type { OneTimeUses } from '../one-time-uses/index.js';
import type { DecisionRecord } from './decision-record.js';

/**
 * How long a use stays claimed past the approval's expiry: replicas' clocks may disagree
 * about the expiry by that much. A use is recorded in the audit log (confirmation_used)
 * well within it, and from then on the log itself refuses another use.
 */
const CLAIM_MARGIN_MS = 60_000;

/**
 * Uses `approval` once across every replica sharing `uses`: claims its use, then records
 * it with `recordUse`. False when another request, on any replica, claimed it first.
 * Rejects (nothing used) when the store cannot answer; when recording fails the claim is
 * released, so that the approval stays usable.
 */
export async function useApproval(
  uses: OneTimeUses,
  approval: DecisionRecord,
  now: Date,
  recordUse: () => Promise<unknown>,
): Promise<boolean> {
  const key = `approval:${approval.decision.decision_id}`;
  // A confirmation token may be redeemed after its decision's deadline: claimed from now then.
  const expiry = Math.max(Date.parse(approval.data.expires_at ?? '') || 0, now.getTime());
  if (!(await uses.claim(key, new Date(expiry + CLAIM_MARGIN_MS)))) return false;
  try {
    await recordUse();
  } catch (err) {
    // Not released (the store is away too): the approval stays claimed until it expires.
    await uses.release(key).catch(() => undefined);
    throw err;
  }
  return true;
}
