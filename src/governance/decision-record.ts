import type { AuditEntry } from '../audit/audit-log.js';
import type { Decision, Evaluation, Outcome, Proposal } from '../model/index.js';

/** What a governance.decision audit entry carries in `data`: enough to answer every read. */
export interface DecisionData {
  request: Proposal;
  evaluation: Evaluation;
  decision: { outcome: Outcome; reason: string; constraints: Record<string, unknown>; timestamp: string };
  /** Who proposed (the API key's name), distinct from the actor it proposed for. */
  principal: string;
  /** Set when this decision consumed a confirmation token of an earlier decision. */
  confirmation_of?: string;
  /** ISO 8601; for ESCALATE and REQUIRE_CONFIRMATION, when a pending decision expires. */
  expires_at?: string;
  /** Where the proposal came from; absent means the HTTP API. */
  source?: 'admission' | 'mcp';
  /** The Kubernetes API request an admission decision governs. */
  kubernetes?: KubernetesRequestData;
  /** The MCP tool call a decision of the tool proxy governs. */
  mcp?: McpCallData;
}

/** The MCP tool call behind a decision of the tool proxy (mcp/), as the trail shows it. */
export interface McpCallData {
  /** The upstream server's name (`--mcp-server NAME=URL`). */
  server: string;
  tool: string;
  /**
   * The agent's MCP session (2025-11-25 Mcp-Session-Id, or the correlation a 2026-07-28
   * call names), also the proposal's context.session_id; absent when there is none.
   */
  session_id?: string;
  /** Identifies "the same call" for an approved retry: actor, tool and arguments. */
  fingerprint: string;
  /**
   * For a pinned tool: the definition digest its upstream listed when the call was decided
   * (null: not listed), the engine's input beside the clock, so that a replay decides alike.
   */
  definition_digest?: string | null;
}

/** The Kubernetes request behind an admission decision, as the trail shows it. */
export interface KubernetesRequestData {
  /** AdmissionReview request.uid. */
  uid: string;
  username: string;
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /**
   * Identifies "the same request" for an approved retry: identity, target and object,
   * without the fields that change on every try (resourceVersion, uid, status ...).
   */
  fingerprint: string;
}

/** confirmation_used: a token or, for a Kubernetes request, an approval was used by a later decision. */
export type ReviewAction = 'approve' | 'deny' | 'expire' | 'confirmation_used';

/** data of a governance.review audit entry. */
export interface ReviewData {
  action: ReviewAction;
  /** The principal: an API key's name, `serviceaccount:<ns>/<name>`, `kubernetes:<user>`, or `arbiter`. */
  reviewer: string;
  /** For a Kubernetes user: the username and groups the API server authenticated (TokenReview). */
  reviewer_username?: string;
  reviewer_groups?: string[];
  comment?: string;
  /** sha256 of the one-time confirmation token issued by approving a REQUIRE_CONFIRMATION. */
  token_sha256?: string;
  /** The decision that used the token (for confirmation_used). */
  used_by?: string;
}

/** data of a governance.execution audit entry. */
export interface ExecutionData {
  status: 'completed' | 'failed';
  result_summary: string | null;
  duration_ms: number | null;
  completed_at: string;
  reporter: string;
  /** For a call the tool proxy forwarded with --audit-signing-key: the signed receipt it carried. */
  receipt?: string;
}

export type ReviewStatus = 'not_required' | 'pending' | 'approved' | 'denied' | 'expired';

/** A decision with everything the audit log knows about it. */
export interface DecisionRecord {
  decision: Decision;
  data: DecisionData;
  entry: AuditEntry;
  reviews: Array<{ entry: AuditEntry; data: ReviewData }>;
  execution: { entry: AuditEntry; data: ExecutionData } | null;
  status: ReviewStatus;
}

export function toDecision(entry: AuditEntry): Decision {
  const data = entry.data as unknown as DecisionData;
  return {
    // Stryker disable next-line StringLiteral: entries are read by their decision_id, never null
    decision_id: entry.decision_id ?? '',
    outcome: data.decision.outcome,
    reason: data.decision.reason,
    risk_score: entry.risk_score ?? data.evaluation.risk_score,
    constraints: data.decision.constraints,
    timestamp: data.decision.timestamp,
    audit_ref: entry.id,
  };
}

/** The outcomes that wait for a reviewer (pending until a verdict or their expiry). */
export const REVIEWED_OUTCOMES = ['ESCALATE', 'REQUIRE_CONFIRMATION'] as const;

export function needsReview(outcome: Outcome): outcome is (typeof REVIEWED_OUTCOMES)[number] {
  return (REVIEWED_OUTCOMES as readonly Outcome[]).includes(outcome);
}

/** The status a review's verdict gives a decision; a used confirmation is no verdict. */
const STATUS_BY_REVIEW: Record<ReviewAction, ReviewStatus | undefined> = {
  approve: 'approved',
  deny: 'denied',
  expire: 'expired',
  confirmation_used: undefined,
};

/** What a review ends a wait with: approved, denied or expired; undefined for no verdict. */
export function verdictStatus(action: ReviewAction): ReviewStatus | undefined {
  return STATUS_BY_REVIEW[action];
}

/** Folds the entries of one decision (oldest first) into its record. */
export function foldDecision(entries: readonly AuditEntry[], now: Date): DecisionRecord | undefined {
  // Stryker disable next-line ConditionalExpression: the decision is always a trail's first entry
  const entry = entries.find((e) => e.event_type === 'governance.decision');
  if (!entry) return undefined;
  const data = entry.data as unknown as DecisionData;
  const reviews = entries
    .filter((e) => e.event_type === 'governance.review')
    .map((e) => ({ entry: e, data: e.data as unknown as ReviewData }));
  const executionEntry = entries.find((e) => e.event_type === 'governance.execution');
  return {
    decision: toDecision(entry),
    data,
    entry,
    reviews,
    execution: executionEntry
      ? { entry: executionEntry, data: executionEntry.data as unknown as ExecutionData }
      : null,
    status: statusOf(data, reviews, now),
  };
}

function statusOf(data: DecisionData, reviews: DecisionRecord['reviews'], now: Date): ReviewStatus {
  if (!needsReview(data.decision.outcome)) return 'not_required';
  // The first verdict stands: a concurrent second one came too late.
  const verdict = reviews.find((r) => STATUS_BY_REVIEW[r.data.action]);
  if (verdict) return STATUS_BY_REVIEW[verdict.data.action]!;
  if (data.expires_at && Date.parse(data.expires_at) <= now.getTime()) return 'expired';
  return 'pending';
}
