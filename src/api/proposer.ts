import { mayActAs, type Principal } from '../auth/index.js';
import { ArbiterError, type Decision, type Proposal } from '../model/index.js';
import type { ApiDependencies } from './dependencies.js';
import { proposalSchema } from './request-schemas.js';
import { compileValidator } from './validation.js';

const validateProposal = compileValidator<Proposal>(proposalSchema, 'proposal');

export type Proposer = (principal: Principal, body: unknown) => Promise<Decision>;

/**
 * POST /governance/propose after authentication and body parsing, shared by the express
 * route and the propose lane: validate, check the actor, decide (stored before it is
 * returned), count.
 */
export function makeProposer(deps: Pick<ApiDependencies, 'decisions' | 'metrics' | 'index'>): Proposer {
  // then() rather than an async function: 0.2 KB less garbage on every proposal.
  return (principal, body) => {
    let proposal: Proposal;
    try {
      proposal = validateProposal(body);
      if (!mayActAs(principal, proposal.actor.id)) {
        throw new ArbiterError(
          'ACTOR_MISMATCH',
          `key "${principal.name}" may not propose for actor ${proposal.actor.id}`,
        );
      }
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const started = performance.now();
    return deps.decisions.propose(proposal, principal.name).then((decision) => {
      deps.metrics.decisionSeconds.observe((performance.now() - started) / 1000);
      const registered = deps.index.current().capability(proposal.action.capability) !== undefined;
      deps.metrics.decisions.count([
        decision.outcome,
        registered ? proposal.action.capability : 'unregistered',
      ]);
      return decision;
    });
  };
}
