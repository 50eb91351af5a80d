import type { IndexedCapability, IndexedGrant, IndexSnapshot } from '../index/index.js';
import type { Proposal, TimeWindow } from '../model/index.js';
import { checkDelegation, type DelegationResult } from './delegation-check.js';
import { checkTimeWindow } from './time-window.js';

export type AuthorityResult =
  | { ok: true; grant: IndexedGrant }
  | {
      ok: false;
      code: 'no_grant' | 'no_delegation' | 'outside_delegation' | 'outside_time_window';
      reason: string;
    };

/**
 * semantics.md step 3 without the rate limit (that needs a counter; see evaluateProposal).
 * A namespaced actor's grants come from cluster ActorGrants and, through the gate of its
 * namespace's Delegation (delegation-check.ts), from its NamespacedActorGrants. An actor may hold several grants of one capability (several ActorGrant objects): any
 * grant that applies now authorizes, and of those the most permissive is applied: no
 * rate limit first, then the highest rate, then object name and position.
 */
export function checkAuthority(
  snapshot: IndexSnapshot,
  proposal: Proposal,
  now: Date,
  registered: IndexedCapability,
  namespace: string | undefined,
): AuthorityResult {
  const { id, type } = proposal.actor;
  const capability = proposal.action.capability;
  const gated = heldGrants(snapshot, id, registered, namespace);
  if (!gated.ok) return gated;
  const held = gated.grants;
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

/**
 * The actor's cluster grants of the capability, plus its namespaced ones when its
 * namespace's Delegation lets them through; the gate's refusal when only namespaced
 * grants were held and the gate stopped them.
 */
function heldGrants(
  snapshot: IndexSnapshot,
  id: string,
  registered: IndexedCapability,
  namespace: string | undefined,
): { ok: true; grants: readonly IndexedGrant[] } | Extract<DelegationResult, { ok: false }> {
  const cluster = snapshot.grantsFor(id, registered.name);
  // Cluster actors (most proposals) skip the namespaced lookup.
  if (namespace === undefined) return { ok: true, grants: cluster };
  const namespaced = snapshot.namespacedGrantsFor(id, registered.name);
  if (namespaced.length === 0) return { ok: true, grants: cluster };
  const gate = checkDelegation(snapshot.delegationOf(namespace), namespace, registered.spec);
  if (gate.ok) return { ok: true, grants: [...cluster, ...namespaced] };
  // Stopped at the gate, the namespace's grants authorize nothing; a cluster grant still may.
  return cluster.length > 0 ? { ok: true, grants: cluster } : gate;
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
