import type { AuditLog } from '../audit/audit-log.js';
import {
  completeDecision,
  evaluateProposal,
  type EngineSettings,
  type RateLimiter,
} from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import type { Decision, EngineDecision, Observations, Outcome, Proposal } from '../model/index.js';
import type { OneTimeUses } from '../one-time-uses/index.js';
import { useApproval } from './approval-use.js';
import {
  foldDecision,
  needsReview,
  type DecisionData,
  type DecisionRecord,
  type KubernetesRequestData,
  type McpCallData,
} from './decision-record.js';
import type { DecisionRecorder } from './decision-recorder.js';

export interface InPathDecisionsDeps {
  index: { current(): IndexSnapshot };
  audit: AuditLog;
  limiter: RateLimiter;
  settings: EngineSettings;
  clock: () => Date;
  recorder: DecisionRecorder;
  /** Where an approval's one use is claimed, shared by the replicas. */
  uses: OneTimeUses;
}

/**
 * A request Arbiter stands in the path of, translated into a proposal: a Kubernetes API
 * request of a bound identity (admission/kubernetes-request.ts) or an agent's MCP tool
 * call (mcp/).
 */
export interface InPathRequest {
  proposal: Proposal;
  /** Who made the request, recorded as the decision's principal. */
  principal: string;
  /** What the decision records of the request: exactly one of the two. */
  recorded: { kubernetes: KubernetesRequestData } | { mcp: McpCallData };
  /** `--dry-run=server`: the same answer, but nothing recorded, used or counted. */
  dryRun: boolean;
  /** What the caller observed for the engine (an MCP tool's current definition digest). */
  observed?: Observations;
}

/** A Kubernetes API request as an in-path request, made by its authenticated user. */
export function kubernetesInPathRequest(
  proposal: Proposal,
  request: KubernetesRequestData,
  dryRun: boolean,
): InPathRequest {
  return { proposal, principal: `kubernetes:${request.username}`, recorded: { kubernetes: request }, dryRun };
}

export interface InPathVerdict {
  outcome: Outcome;
  reason: string;
  /** The recorded decision; undefined for a dry run, which records nothing. */
  decisionId: string | undefined;
  /** Its governance.decision audit entry (the decision's audit_ref); undefined for a dry run. */
  auditRef: string | undefined;
  /** When a pending (ESCALATE, REQUIRE_CONFIRMATION) decision expires. */
  expiresAt: string | undefined;
  /** The approved decision this request used (or, dry run, would use). */
  approvalOf: string | undefined;
  /** What warn-mode policies would have decided (kubectl prints them). */
  warnings: string[];
}

/** Most earlier decisions of one actor and capability searched for a usable approval. */
const APPROVAL_SEARCH_LIMIT = 200;

/**
 * Decides the requests Arbiter stands in the path of with the same engine, index and audit
 * log as proposals. An ESCALATE or REQUIRE_CONFIRMATION decision that a reviewer approved
 * lets the same request (same identity, same ask) through once more while it is within its
 * pending TTL; that use is claimed across replicas and audited, and a further try is
 * decided anew.
 */
export class InPathDecisions {
  constructor(private readonly deps: InPathDecisionsDeps) {}

  async decide(request: InPathRequest): Promise<InPathVerdict> {
    const input = { ...request, recorded: this.keyed(request) };
    const { proposal, dryRun } = input;
    const now = this.deps.clock();
    const preliminary = evaluateProposal(
      this.deps.index.current(),
      proposal,
      now,
      this.deps.settings,
      input.observed,
    );
    const { limiter } = this.deps;
    const limits = preliminary.rateLimits;
    const at = now.getTime();
    // A dry run asks what the limits would say, without spending any of them.
    const admission = await (dryRun ? limiter.peekAll(limits, at) : limiter.admitAll(limits, at));
    const decided = completeDecision(preliminary, admission);
    if (!needsReview(decided.outcome)) return this.finish(input, decided, now);
    const { recorded } = input;
    const fingerprint = 'kubernetes' in recorded ? recorded.kubernetes.fingerprint : recorded.mcp.fingerprint;
    const { usable, used } = await this.approvals(proposal, fingerprint, decided.outcome, now);
    if (!usable) return this.finish(input, used ? alreadyUsed(decided, used) : decided, now);
    if (dryRun) return verdict(approved(decided, usable), undefined, undefined, usable.decision.decision_id);
    // Another try, on this replica or another, may have found the approval unused as well.
    const recordUse = () =>
      this.deps.recorder.appendReview(usable, { action: 'confirmation_used', reviewer: input.principal });
    if (!(await useApproval(this.deps.uses, usable, now, recordUse)))
      return this.finish(input, alreadyUsed(decided, usable), now);
    return this.finish(input, approved(decided, usable), now, usable.decision.decision_id);
  }

  /** The request's data as recorded: its fingerprint keyed where the parameters are sensitive. */
  private keyed({ recorded, proposal }: InPathRequest): InPathRequest['recorded'] {
    const key = (fingerprint: string) =>
      this.deps.recorder.recordedFingerprint(fingerprint, proposal.action.capability);
    return 'kubernetes' in recorded
      ? { kubernetes: { ...recorded.kubernetes, fingerprint: key(recorded.kubernetes.fingerprint) } }
      : { mcp: { ...recorded.mcp, fingerprint: key(recorded.mcp.fingerprint) } };
  }

  private async finish(
    input: InPathRequest,
    decided: EngineDecision,
    now: Date,
    approvalOf?: string,
  ): Promise<InPathVerdict> {
    const expiresAt = needsReview(decided.outcome)
      ? this.deps.recorder.expiryFrom(now, decided).toISOString()
      : undefined;
    // What the requester is told quotes no sensitive value, like what is recorded: the
    // recorder scrubs what it records and answers; a dry run records nothing.
    if (input.dryRun)
      return verdict(this.deps.recorder.scrubbed(input.proposal, decided), undefined, expiresAt, approvalOf);
    const decision = await this.deps.recorder.record(input.proposal, decided, input.principal, now, {
      ...input.recorded,
      ...(approvalOf ? { confirmationOf: approvalOf } : {}),
    });
    const answered = { ...decided, reason: decision.reason, warnings: decision.warnings ?? [] };
    return verdict(answered, decision, expiresAt, approvalOf);
  }

  /**
   * The newest approved, unused, unexpired decision of the same request whose outcome is at
   * least as strict as today's (an approved ESCALATE also covers a REQUIRE_CONFIRMATION),
   * and, when there is none, the newest such approval that was used already.
   */
  private async approvals(
    proposal: Proposal,
    fingerprint: string,
    outcome: Outcome,
    now: Date,
  ): Promise<{ usable?: DecisionRecord; used?: DecisionRecord }> {
    const covering: Outcome[] = outcome === 'ESCALATE' ? ['ESCALATE'] : ['ESCALATE', 'REQUIRE_CONFIRMATION'];
    const since = new Date(now.getTime() - this.deps.recorder.pendingTtlSeconds * 1000).toISOString();
    const page = await this.deps.audit.query({
      event_type: 'governance.decision',
      actor_id: proposal.actor.id,
      capability: proposal.action.capability,
      since,
      order: 'desc',
      limit: APPROVAL_SEARCH_LIMIT,
    });
    let used: DecisionRecord | undefined;
    for (const entry of page.entries) {
      if (fingerprintOf(entry.data) !== fingerprint) continue;
      if (!entry.outcome || !covering.includes(entry.outcome) || !entry.decision_id) continue;
      const record = foldDecision(await this.deps.audit.byDecision(entry.decision_id), now);
      if (!record || !isUnexpiredApproval(record, now)) continue;
      if (!wasUsed(record)) return { usable: record };
      used ??= record;
    }
    return { used };
  }
}

/** What identifies "the same request" of a recorded decision, whichever path it came by. */
function fingerprintOf(recorded: Partial<DecisionData>): string | undefined {
  return recorded.kubernetes?.fingerprint ?? recorded.mcp?.fingerprint;
}

function isUnexpiredApproval(record: DecisionRecord, now: Date): boolean {
  // Stryker disable next-line StringLiteral: no expiry is NaN, whatever the fallback text
  const expiresAt = Date.parse(record.data.expires_at ?? '');
  return record.status === 'approved' && expiresAt > now.getTime();
}

function wasUsed(record: DecisionRecord): boolean {
  return record.reviews.some((r) => r.data.action === 'confirmation_used');
}

/** A try that finds its approval used: decided anew, and told why the approval did not count. */
function alreadyUsed(decided: EngineDecision, approval: DecisionRecord): EngineDecision {
  const reason = `the approval of decision ${approval.decision.decision_id} was already used; ${decided.reason}`;
  return { ...decided, reason };
}

function approved(decided: EngineDecision, approval: DecisionRecord): EngineDecision {
  // Stryker disable next-line ConditionalExpression: an approved record's first review is its approval
  const review = approval.reviews.find((r) => r.data.action === 'approve');
  // Stryker disable next-line StringLiteral: an approved record always has its approval
  const reviewer = review?.data.reviewer ?? 'a reviewer';
  const reason = `approved by ${reviewer} (decision ${approval.decision.decision_id}); ${decided.reason}`;
  return { ...decided, outcome: 'ALLOW', reason };
}

function verdict(
  decided: EngineDecision,
  recorded: Pick<Decision, 'decision_id' | 'audit_ref'> | undefined,
  expiresAt: string | undefined,
  approvalOf: string | undefined,
): InPathVerdict {
  return {
    outcome: decided.outcome,
    reason: decided.reason,
    decisionId: recorded?.decision_id,
    auditRef: recorded?.audit_ref,
    expiresAt,
    approvalOf,
    warnings: decided.warnings ?? [],
  };
}
