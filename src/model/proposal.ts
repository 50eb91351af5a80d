import type { ActorType, Outcome, RiskLevel } from './vocabulary.js';

/** service-interface.md 2.1, after request validation. */
export interface Proposal {
  actor: { id: string; type: ActorType };
  action: { capability: string; parameters: Record<string, unknown> };
  context?: { session_id?: string; metadata?: Record<string, unknown>; confirmation_token?: string };
}

/** Stage results of the trail (service-interface.md 2.7, semantics.md pipeline). */
export type CapabilityCheck = 'pass' | 'not_registered' | 'definition_changed' | 'invalid_parameters';

/**
 * What the caller observed when the proposal was made, handed to the engine like the clock
 * (the engine reads nothing itself). Absent members were not observed.
 */
export interface Observations {
  /**
   * The definition digest of the MCP tool a proxied call is for, as its upstream lists it
   * now (src/mcp/tool-definition-digest.ts); null when the upstream no longer lists it.
   */
  toolDefinitionDigest?: string | null;
}
/** What the authority check (semantics.md step 3) found; the schemas and docs list these. */
export const AUTHORITY_CHECKS = [
  'pass',
  'no_grant',
  'no_delegation',
  'outside_delegation',
  'outside_time_window',
  'rate_limited',
  'skipped',
] as const;
export type AuthorityCheck = (typeof AUTHORITY_CHECKS)[number];

/** Which tier of policies decided (issue #38): the cluster's, or the actor's namespace's. */
export const TIERS = ['cluster', 'namespace'] as const;
export type Tier = (typeof TIERS)[number];

export interface RuleEvaluation {
  policy: string;
  rule_index: number;
  priority: number;
  outcome: Outcome;
  matched: boolean;
  /** The rule's reviewTtlSeconds, when it sets one. */
  review_ttl_seconds?: number;
  /** Set when the condition failed to evaluate; see semantics.md step 5. */
  error?: string;
  /** Set for rules of policies in warn or audit mode: they never decide. */
  enforcement?: 'warn' | 'audit';
}

/** What a warn- or audit-mode policy would have decided, had it been enforced. */
export interface ShadowDecision {
  outcome: Outcome;
  policy: string;
  rule_index: number;
  enforcement: 'warn' | 'audit';
}

export interface Evaluation {
  capability_check: CapabilityCheck;
  authority_check: AuthorityCheck;
  risk_score: number;
  risk_threshold: number;
  policies_evaluated: string[];
  policy_matched: string | null;
  rule_matched: {
    policy: string;
    rule_index: number;
    priority: number;
    outcome: Outcome;
    /** How long a decision this rule escalates waits for review, when the rule says. */
    review_ttl_seconds?: number;
  } | null;
  rules: RuleEvaluation[];
  risk_override: boolean;
  /** Set when a warn- or audit-mode policy would have changed the outcome. */
  shadow_decision?: ShadowDecision;
  /**
   * Which tier decided; set only when the actor's namespace has policies for the
   * capability (absent, the cluster tier decided alone, as before tenancy).
   */
  tier?: Tier;
  /**
   * The capability's risk level when a namespaced actor's proposal is escalated: whether
   * the namespace's reviewers may settle it (Delegation reviewers.maxRiskLevel) is judged
   * from the decision as recorded, not from the capability as it is at review time.
   */
  capability_risk_level?: RiskLevel;
}

/** What the engine decides; the caller adds decision_id, timestamp and audit_ref. */
export interface EngineDecision {
  outcome: Outcome;
  reason: string;
  risk_score: number;
  constraints: Record<string, unknown>;
  evaluation: Evaluation;
  /** For the caller: what warn-mode policies would have decided. */
  warnings?: string[];
}

/** service-interface.md 2.2: the propose response. */
export interface Decision {
  decision_id: string;
  outcome: Outcome;
  reason: string;
  risk_score: number;
  constraints: Record<string, unknown>;
  timestamp: string;
  audit_ref: string;
  /** What warn-mode policies would have decided (absent when none would have changed it). */
  warnings?: string[];
}
