import {
  kubernetesInPathRequest,
  type InPathDecisions,
  type InPathVerdict,
} from '../governance/in-path-decisions.js';
import type { IndexSnapshot } from '../index/index.js';
import { allow, refuse, type AdmissionRequest, type AdmissionResponse } from './admission-review.js';
import { capabilityOf, proposalOf, requestDataOf } from './kubernetes-request.js';

export interface GovernanceReviewDeps {
  index: { current(): IndexSnapshot };
  decisions: InPathDecisions;
  /** Never governed, whatever the webhook configuration lets through (kube-system, Arbiter's own). */
  exemptNamespaces: ReadonlySet<string>;
}

/** The outcome label of `arbiter_admission_requests_total`. */
export type GovernanceResult = { response: AdmissionResponse; outcome: string };

/**
 * The governance webhook: a request of an identity bound to an actor becomes that actor's
 * proposal and is decided like one; everyone else is RBAC's business and passes at once,
 * recorded nowhere (a map lookup, so that answer costs microseconds).
 */
export async function reviewGovernedRequest(
  request: AdmissionRequest,
  deps: GovernanceReviewDeps,
): Promise<GovernanceResult> {
  const snapshot = deps.index.current();
  // Stryker disable next-line StringLiteral: subjects have non-empty names, so a request without a username is bound to nobody
  const binding = snapshot.actorOfIdentity(request.userInfo.username ?? '');
  // The namespaceSelector excludes these too, but kubernetes.io/metadata.name exists only from 1.21.
  // Stryker disable next-line StringLiteral: exempt namespaces are named ones, so a cluster-scoped request is never exempt
  if (!binding || deps.exemptNamespaces.has(request.namespace ?? ''))
    return { response: allow(request.uid), outcome: 'not_governed' };
  const verdict = await deps.decisions.decide(
    kubernetesInPathRequest(proposalOf(request, binding), requestDataOf(request), request.dryRun === true),
  );
  return { response: answer(request, binding.actorId, verdict), outcome: verdict.outcome };
}

function answer(request: AdmissionRequest, actorId: string, verdict: InPathVerdict): AdmissionResponse {
  const answered = answerFor(request, actorId, verdict);
  return verdict.warnings.length > 0 ? { ...answered, warnings: verdict.warnings } : answered;
}

function answerFor(request: AdmissionRequest, actorId: string, verdict: InPathVerdict): AdmissionResponse {
  if (verdict.outcome === 'ALLOW') return allow(request.uid);
  const capability = capabilityOf(request);
  const recorded = verdict.decisionId
    ? `decision ${verdict.decisionId}`
    : 'dry run: no decision was recorded';
  if (verdict.outcome === 'DENY')
    return refuse(
      request.uid,
      403,
      `Arbiter denied ${capability} for actor ${actorId}: ${verdict.reason} (${recorded})`,
    );
  const how = verdict.decisionId
    ? `It is pending review until ${verdict.expiresAt}: once a reviewer approves it ` +
      `(POST /api/v1/governance/decisions/${verdict.decisionId}/approve), retry the same request once.`
    : 'The real request would wait for a reviewer.';
  return refuse(
    request.uid,
    403,
    `Arbiter: ${capability} for actor ${actorId} needs review (${verdict.outcome}): ${verdict.reason} ` +
      `(${recorded}). ${how}`,
  );
}
