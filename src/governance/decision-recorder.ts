import type { AuditEntry, AuditLog } from '../audit/audit-log.js';
import { withCanonicalOrder } from '../audit/chain.js';
import { actorNamespaceMember } from '../audit/entry-namespace.js';
import type { Decision, EngineDecision, Proposal, ShadowDecision } from '../model/index.js';
import type { ParameterMasker } from './parameter-masker.js';
import {
  needsReview,
  type DecisionData,
  DecisionRecord,
  ExecutionData,
  KubernetesRequestData,
  McpCallData,
  ReviewAction,
  ReviewData,
} from './decision-record.js';

export interface DecisionRecorderDeps {
  audit: AuditLog;
  clock: () => Date;
  /** How long ESCALATE and REQUIRE_CONFIRMATION decisions stay pending. */
  pendingTtlSeconds: number;
  newId: () => string;
  /** Told of every recorded decision that a warn- or audit-mode policy would have changed. */
  onShadowDecision?: (shadow: ShadowDecision) => void;
  /** Told of every decision recorded (metrics). */
  onDecision?: (decided: EngineDecision) => void;
  /** Masks sensitive parameters in what is recorded; without it nothing is masked. */
  masker?: Pick<ParameterMasker, 'maskProposal' | 'recordedFingerprint' | 'scrubDecision' | 'scrubText'>;
}

/** What a decision records besides the proposal and the engine's verdict. */
export interface DecisionExtras {
  /** The earlier decision whose confirmation token or approval this decision used. */
  confirmationOf?: string;
  /** Set when the decision governs a Kubernetes API request (the admission webhook). */
  kubernetes?: KubernetesRequestData;
  /** Set when the decision governs an MCP tool call (the tool proxy). */
  mcp?: McpCallData;
}

/**
 * Writes decisions and their reviews into the audit log, whichever way they came in (the
 * HTTP API or the admission webhook): every decision is stored before it is answered.
 */
export class DecisionRecorder {
  constructor(private readonly deps: DecisionRecorderDeps) {}

  get pendingTtlSeconds(): number {
    return this.deps.pendingTtlSeconds;
  }

  /** The proposal as a decision records it: sensitive parameters masked. */
  recorded(proposal: Proposal): Proposal {
    return this.deps.masker ? this.deps.masker.maskProposal(proposal) : proposal;
  }

  /** The decision as recorded and answered: no sensitive value quoted in its messages. */
  scrubbed(proposal: Proposal, decided: EngineDecision): EngineDecision {
    return this.deps.masker ? this.deps.masker.scrubDecision(proposal, decided) : decided;
  }

  /** A text about the proposal as recorded: no sensitive value of it quoted. */
  scrubbedText(proposal: Proposal, text: string): string {
    return this.deps.masker ? this.deps.masker.scrubText(proposal, text) : text;
  }

  /** A request's fingerprint as a decision records it (ParameterMasker.recordedFingerprint). */
  recordedFingerprint(fingerprint: string, capability: string): string {
    return this.deps.masker ? this.deps.masker.recordedFingerprint(fingerprint, capability) : fingerprint;
  }

  async record(
    proposal: Proposal,
    engineDecision: EngineDecision,
    principal: string,
    now: Date,
    extras: DecisionExtras = {},
  ): Promise<Decision> {
    const decided = this.scrubbed(proposal, engineDecision);
    const decisionId = this.deps.newId();
    const timestamp = now.toISOString();
    // Members added in canonical (sorted) order, so that sealing writes them as they are
    // (canonical-writer.ts), and one by one: conditional spreads in a literal gave every
    // such object a map of its own (0.4 KB per decision).
    const data = {} as DecisionData & Record<string, unknown>;
    if (extras.confirmationOf) data.confirmation_of = extras.confirmationOf;
    data.decision = {
      constraints: decided.constraints,
      outcome: decided.outcome,
      reason: decided.reason,
      timestamp,
    };
    data.evaluation = decided.evaluation;
    if (needsReview(decided.outcome)) data.expires_at = this.expiryFrom(now, decided).toISOString();
    if (extras.kubernetes) data.kubernetes = extras.kubernetes;
    if (extras.mcp) data.mcp = extras.mcp;
    data.principal = principal;
    data.request = withCanonicalOrder(this.recorded(proposal));
    const source = sourceOf(extras);
    if (source) data.source = source;
    const entry = await this.deps.audit.append({
      event_type: 'governance.decision',
      timestamp,
      actor_id: proposal.actor.id,
      capability: proposal.action.capability,
      outcome: decided.outcome,
      risk_score: decided.risk_score,
      decision_id: decisionId,
      policies_evaluated: decided.evaluation.policies_evaluated,
      policy_matched: decided.evaluation.policy_matched,
      data,
      ...actorNamespaceMember(proposal.actor.id),
    });
    const shadow = decided.evaluation.shadow_decision;
    if (shadow) this.deps.onShadowDecision?.(shadow);
    this.deps.onDecision?.(decided);
    const decision: Decision = {
      decision_id: decisionId,
      outcome: decided.outcome,
      reason: decided.reason,
      risk_score: decided.risk_score,
      constraints: decided.constraints,
      timestamp,
      audit_ref: entry.id,
    };
    if (decided.warnings?.length) decision.warnings = decided.warnings;
    return decision;
  }

  /**
   * When a decision made at `now` stops being pending: after the deciding rule's
   * reviewTtlSeconds when that rule gave the outcome (not when the risk score escalated
   * past it), else after the server's default.
   */
  expiryFrom(now: Date, decided: EngineDecision): Date {
    const rule = decided.evaluation.rule_matched;
    const ruleTtl = rule?.outcome === decided.outcome ? rule.review_ttl_seconds : undefined;
    return new Date(now.getTime() + (ruleTtl ?? this.deps.pendingTtlSeconds) * 1000);
  }

  /**
   * Records what became of an executable decision (governance.execution); the caller has
   * checked that it is one and not reported yet.
   */
  appendExecution(
    decision: Pick<AuditEntry, 'actor_id' | 'capability' | 'decision_id'>,
    data: ExecutionData,
  ): Promise<AuditEntry> {
    return this.deps.audit.append({
      ...linkedTo(decision),
      event_type: 'governance.execution',
      timestamp: data.completed_at,
      data: { ...data },
    });
  }

  appendReview(record: DecisionRecord, data: ReviewData & { action: ReviewAction }): Promise<AuditEntry> {
    return this.deps.audit.append({
      ...linkedTo(record.entry),
      event_type: 'governance.review',
      timestamp: this.deps.clock().toISOString(),
      data: { ...data },
    });
  }
}

/** The fields an entry about an existing decision (review, execution) shares with it. */
export function linkedTo(entry: Pick<AuditEntry, 'actor_id' | 'capability' | 'decision_id'>) {
  return {
    actor_id: entry.actor_id,
    capability: entry.capability,
    outcome: null,
    risk_score: null,
    decision_id: entry.decision_id,
    policies_evaluated: [],
    policy_matched: null,
    ...actorNamespaceMember(entry.actor_id),
  };
}

/** Where a decision came from, when not from the HTTP API. */
function sourceOf(extras: DecisionExtras): DecisionData['source'] {
  if (extras.kubernetes) return 'admission';
  if (extras.mcp) return 'mcp';
  return undefined;
}
