/** Response shapes of the public API, as far as the console reads them (see /api/v1/openapi.json). */

// The vocabulary and scopes come from the server's own modules (pure, no I/O), so the
// console's choices cannot drift from what the API accepts.
export { EVENT_TYPES, OUTCOMES, type Outcome } from '../../../src/model/vocabulary.js';
export type { Scope } from '../../../src/auth/scopes.js';
export type { RuleEvaluation } from '../../../src/model/proposal.js';
import type { Outcome } from '../../../src/model/vocabulary.js';
import type { RuleEvaluation } from '../../../src/model/proposal.js';
import type { Scope } from '../../../src/auth/scopes.js';

export interface Whoami {
  principal: string;
  scopes: Scope[];
  actors: string[] | null;
  kubernetes: { username: string; groups: string[] } | null;
}

export interface Review {
  action: string;
  reviewer: string;
  comment: string | null;
  timestamp: string;
}

export interface DecisionView {
  decision_id: string;
  outcome: Outcome;
  reason: string;
  risk_score: number;
  timestamp: string;
  audit_ref: string;
  confirmation_token?: string;
  /** The actor's namespace (`team-a/bot`); null for cluster actors; absent from older servers. */
  namespace?: string | null;
  audit: {
    status: 'not_required' | 'pending' | 'approved' | 'denied' | 'expired';
    expires_at: string | null;
    actor_id: string;
    capability: string;
    parameters: Record<string, unknown>;
    principal: string;
    source: string;
    policy_matched: string | null;
    reviews: Review[];
    execution: Record<string, unknown> | null;
    seq: number;
  };
}

export interface Trail {
  decision_id: string;
  request: {
    actor: { id: string; type: string };
    action: { capability: string; parameters: Record<string, unknown> };
    context?: Record<string, unknown>;
  };
  evaluation: {
    capability_check: string;
    authority_check: string;
    risk_score: number;
    risk_threshold: number;
    policies_evaluated: string[];
    policy_matched: string | null;
    rule_matched: { policy: string; rule_index: number; outcome: Outcome } | null;
    rules: RuleEvaluation[];
    risk_override: boolean;
    shadow_decision: { outcome: Outcome; policy: string; rule_index: number; enforcement: string } | null;
  };
  review: { status: string; expires_at: string | null; reviews: Review[] };
  execution: {
    status: string;
    result_summary: string | null;
    duration_ms: number | null;
    completed_at: string;
  } | null;
  integrity: {
    seq: number;
    hash: string;
    previous_hash: string;
    chain_verified: boolean;
    inclusion_proof: import('../integrity/verify-entry-inclusion.js').InclusionProofView | null;
  };
}

export interface AuditEntry {
  id: string;
  seq: number;
  event_type: string;
  timestamp: string;
  actor_id: string | null;
  capability: string | null;
  outcome: Outcome | null;
  risk_score: number | null;
  decision_id: string | null;
  policies_evaluated: string[];
  policy_matched: string | null;
  data: Record<string, unknown>;
  hash: string;
  previous_hash: string;
}

export interface Capability {
  name: string;
  description: string;
  risk_level: string;
  parameter_schema: Record<string, unknown>;
}

export interface ObjectStatus {
  ready: boolean;
  reason: string;
  message?: string;
}

export interface Policy {
  name: string;
  description: string;
  enabled: boolean;
  enforcement_action: string;
  rules: { capability: string; condition?: string; outcome: Outcome; priority?: number }[];
  status: ObjectStatus | null;
}

export interface Grant {
  capability: string;
  constraints: Record<string, unknown>;
  source: string;
}

export interface VerifyReport {
  ok: boolean;
  entries_checked: number;
  head: { seq: number; hash: string };
  break?: { seq: number; entry_id?: string; reason: string };
  checkpoints_checked: number;
}

export interface CheckpointView {
  seq: number;
  hash: string;
  entry_id: string;
  time: string;
  note: string | null;
}

/** Every list of the API: one page of items under their plural name. */
export type Page<K extends string, T> = { [key in K]: T[] } & { total: number; cursor: string | null };
