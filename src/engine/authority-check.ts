import type { IndexedGrant, IndexSnapshot } from '../index/index.js';
import type { Proposal, TimeWindow } from '../model/index.js';
import { checkTimeWindow } from './time-window.js';

export type AuthorityResult =
  { ok: true; grant: IndexedGrant } | { ok: false; code: 'no_grant' | 'outside_time_window'; reason: string };

/**
 * semantics.md step 3 without the rate limit (that needs a counter; see evaluateProposal).
 * An actor may hold several grants of one capability (several ActorGrant objects): any
 * grant that applies now authorizes, and of those the most permissive is applied: no
 * rate limit first, then the highest rate, then object name and position.
 */
export function checkAuthority(snapshot: IndexSnapshot, proposal: Proposal, now: Date): AuthorityResult {
  const { id, type } = proposal.actor;
  const capability = proposal.action.capability;
  const held = snapshot.grantsFor(id, capability);
  const forType = held.filter((g) => g.actorType === undefined || g.actorType === type);
  if (forType.length === 0) {
    const reason =
      held.length > 0
        ? `Actor ${id} holds a grant for ${capability} only as type ${held[0]!.actorType}, not as ${type}.`
        : `Actor ${id} has no grant for capability ${capability}.`;
    return { ok: false, code: 'no_grant', reason };
  }
  const open: IndexedGrant[] = [];
  const closed: string[] = [];
  for (const grant of forType) {
    const window = grant.constraints.timeWindow;
    const verdict = window ? checkTimeWindow(window, now) : { kind: 'open' as const };
    if (verdict.kind === 'open') open.push(grant);
    else closed.push(closedText(window!, verdict.kind === 'closed' ? verdict.localTime : undefined));
  }
  if (open.length === 0)
    return {
      ok: false,
      code: 'outside_time_window',
      reason: `Actor ${id} may use ${capability} only ${closed.join('; or ')}.`,
    };
  return { ok: true, grant: open.reduce((best, g) => (morePermissive(g, best) ? g : best)) };
}

function closedText(window: TimeWindow, localTime: string | undefined): string {
  const span = `between ${window.start} and ${window.end} (${window.timezone})`;
  return localTime === undefined
    ? `${span}, and ${window.timezone} is not a known time zone, so the grant denies (fail closed)`
    : `${span}; it is ${localTime} there`;
}

/** Strictly more permissive; on a tie the earlier grant (object name, position) stays. */
function morePermissive(a: IndexedGrant, b: IndexedGrant): boolean {
  const ra = a.constraints.rateLimit;
  const rb = b.constraints.rateLimit;
  if (!rb) return false;
  if (!ra) return true;
  const rateA = ra.maxRequests / ra.windowSeconds;
  const rateB = rb.maxRequests / rb.windowSeconds;
  // Stryker disable next-line EqualityOperator: in the first branch the rates differ, so > and >= agree.
  return rateA !== rateB ? rateA > rateB : ra.maxRequests > rb.maxRequests;
}
