import type { AuditLog } from '../audit/audit-log.js';
import {
  completeDecision,
  evaluateProposal,
  type EngineSettings,
  type RateLimiter,
} from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import type { EngineDecision, Outcome, Proposal } from '../model/index.js';
import { foldDecision, type DecisionRecord, type KubernetesRequestData } from './decision-record.js';
import type { DecisionRecorder } from './decision-recorder.js';

export interface KubernetesRequestDecisionsDeps {
  index: { current(): IndexSnapshot };
  audit: AuditLog;
  limiter: RateLimiter;
  settings: EngineSettings;
  clock: () => Date;
  recorder: DecisionRecorder;
}

/** A Kubernetes API request of a bound identity, translated (see admission/kubernetes-request.ts). */
export interface KubernetesRequestProposal {
  proposal: Proposal;
  request: KubernetesRequestData;
  /** `--dry-run=server`: the same answer, but nothing recorded, used or counted. */
  dryRun: boolean;
}

export interface KubernetesVerdict {
  outcome: Outcome;
  reason: string;
  /** The recorded decision; undefined for a dry run, which records nothing. */
  decisionId: string | undefined;
  /** When a pending (ESCALATE, REQUIRE_CONFIRMATION) decision expires. */
  expiresAt: string | undefined;
  /** The approved decision this request used (or, dry run, would use). */
  approvalOf: string | undefined;
  /** What warn-mode policies would have decided (kubectl prints them). */
  warnings: string[];
}

/** Most earlier decisions of one actor and capability searched for a usable approval. */
const APPROVAL_SEARCH_LIMIT = 200;

const PENDING: ReadonlySet<Outcome> = new Set(['ESCALATE', 'REQUIRE_CONFIRMATION']);

/**
 * Decides the Kubernetes API requests of identities bound to actors with the same engine,
 * index and audit log as proposals. An ESCALATE or REQUIRE_CONFIRMATION decision that a
 * reviewer approved lets the same request (same identity, same ask) through once more
 * while it is within its pending TTL; that use is audited and a further try is decided anew.
 */
export class KubernetesRequestDecisions {
  /** Approvals being used in this process, so two concurrent retries cannot both use one. */
  private readonly using = new Set<string>();

  constructor(private readonly deps: KubernetesRequestDecisionsDeps) {}

  async decide(input: KubernetesRequestProposal): Promise<KubernetesVerdict> {
    const { proposal, request, dryRun } = input;
    const now = this.deps.clock();
    const preliminary = evaluateProposal(this.deps.index.current(), proposal, now, this.deps.settings);
    const { limiter } = this.deps;
    const limit = preliminary.rateLimit;
    const at = now.getTime();
    // A dry run asks what the limit would say, without spending any of it.
    // Stryker disable next-line BooleanLiteral: without a rate limit completeDecision ignores the admission
    const admission = limit ? await (dryRun ? limiter.peek(limit, at) : limiter.admit(limit, at)) : true;
    const decided = completeDecision(preliminary, admission);
    if (!PENDING.has(decided.outcome)) return this.finish(input, decided, now);
    const approval = await this.usableApproval(proposal, request, decided.outcome, now);
    if (!approval) return this.finish(input, decided, now);
    if (dryRun)
      return verdict(approved(decided, approval), undefined, undefined, approval.decision.decision_id);
    const key = approval.decision.decision_id;
    if (this.using.has(key)) return this.finish(input, decided, now);
    this.using.add(key);
    try {
      await this.deps.recorder.appendReview(approval, {
        action: 'confirmation_used',
        reviewer: principalOf(request),
      });
      return await this.finish(input, approved(decided, approval), now, key);
    } finally {
      this.using.delete(key);
    }
  }

  private async finish(
    input: KubernetesRequestProposal,
    decided: EngineDecision,
    now: Date,
    approvalOf?: string,
  ): Promise<KubernetesVerdict> {
    const pending = PENDING.has(decided.outcome);
    if (input.dryRun) {
      const expiresAt = pending ? this.deps.recorder.expiryFrom(now, decided).toISOString() : undefined;
      return verdict(decided, undefined, expiresAt, approvalOf);
    }
    const decision = await this.deps.recorder.record(
      input.proposal,
      decided,
      principalOf(input.request),
      now,
      { kubernetes: input.request, ...(approvalOf ? { confirmationOf: approvalOf } : {}) },
    );
    const expiresAt = pending ? this.deps.recorder.expiryFrom(now, decided).toISOString() : undefined;
    return verdict(decided, decision.decision_id, expiresAt, approvalOf);
  }

  /**
   * The newest approved, unused, unexpired decision of the same request whose outcome is at
   * least as strict as today's (an approved ESCALATE also covers a REQUIRE_CONFIRMATION).
   */
  private async usableApproval(
    proposal: Proposal,
    request: KubernetesRequestData,
    outcome: Outcome,
    now: Date,
  ): Promise<DecisionRecord | undefined> {
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
    for (const entry of page.entries) {
      const data = entry.data as { kubernetes?: KubernetesRequestData };
      if (data.kubernetes?.fingerprint !== request.fingerprint) continue;
      if (!entry.outcome || !covering.includes(entry.outcome) || !entry.decision_id) continue;
      const record = foldDecision(await this.deps.audit.byDecision(entry.decision_id), now);
      if (record && isUsable(record, now)) return record;
    }
    return undefined;
  }
}

/** Who proposed, in the decision's principal field: the Kubernetes user, not an API key. */
function principalOf(request: KubernetesRequestData): string {
  return `kubernetes:${request.username}`;
}

function isUsable(record: DecisionRecord, now: Date): boolean {
  // Stryker disable next-line StringLiteral: no expiry is NaN, whatever the fallback text
  const expiresAt = Date.parse(record.data.expires_at ?? '');
  return (
    record.status === 'approved' &&
    expiresAt > now.getTime() &&
    !record.reviews.some((r) => r.data.action === 'confirmation_used')
  );
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
  decisionId: string | undefined,
  expiresAt: string | undefined,
  approvalOf: string | undefined,
): KubernetesVerdict {
  return {
    outcome: decided.outcome,
    reason: decided.reason,
    decisionId,
    expiresAt,
    approvalOf,
    warnings: decided.warnings ?? [],
  };
}
