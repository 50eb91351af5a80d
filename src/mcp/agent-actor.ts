import { mayActAs, type Principal } from '../auth/index.js';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError, type ActorType } from '../model/index.js';

/** The header naming the actor when a credential may act for several. */
export const ACTOR_HEADER = 'x-arbiter-actor';

/** An MCP client is an AI agent unless the actor's ActorGrant says otherwise. */
const DEFAULT_MCP_ACTOR_TYPE: ActorType = 'ai-agent';

/**
 * The actor an MCP session proposes for: the one actor its credential is bound to, or the
 * one it names in X-Arbiter-Actor among those it may act for; typed as its ActorGrants say.
 */
export function agentActor(
  principal: Principal,
  named: string | undefined,
  snapshot: IndexSnapshot,
): { id: string; type: ActorType } {
  const bound = principal.actors ? [...principal.actors] : undefined;
  const id = named ?? (bound?.length === 1 ? bound[0] : undefined);
  if (id === undefined) {
    throw new ArbiterError(
      'INVALID_REQUEST',
      `"${principal.name}" may act for ${bound ? `${bound.length} actors` : 'any actor'}: name one in the X-Arbiter-Actor header`,
    );
  }
  if (!mayActAs(principal, id))
    throw new ArbiterError('ACTOR_MISMATCH', `"${principal.name}" may not act for actor ${id}`);
  const typed = snapshot.grantsOfActor(id).find((grant) => grant.actorType !== undefined);
  return { id, type: typed?.actorType ?? DEFAULT_MCP_ACTOR_TYPE };
}
