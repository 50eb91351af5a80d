/** The fixed vocabularies of service-interface.md, as runtime lists and types. */

export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Whether `level` is `max` or below it (RISK_LEVELS lists the lowest first). */
export function riskLevelAtMost(level: RiskLevel, max: RiskLevel): boolean {
  return RISK_LEVELS.indexOf(level) <= RISK_LEVELS.indexOf(max);
}

export const ACTOR_TYPES = ['ai-agent', 'ai-copilot', 'automation', 'human'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Kinds of Kubernetes identities an ActorGrant may bind to its actor (RBAC subjects). */
export const SUBJECT_KINDS = ['ServiceAccount', 'User'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

export const OUTCOMES = ['ALLOW', 'DENY', 'ESCALATE', 'REQUIRE_CONFIRMATION'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * How a policy's rules act: enforce decides; warn leaves the outcome as it is and tells the
 * caller what the policy would have decided; audit only records that in the trail.
 */
export const ENFORCEMENT_ACTIONS = ['enforce', 'warn', 'audit'] as const;
export type EnforcementAction = (typeof ENFORCEMENT_ACTIONS)[number];

/** Most restrictive first: at equal priority the earlier outcome wins (semantics.md, step 5). */
export const OUTCOME_RESTRICTIVENESS: readonly Outcome[] = [
  'DENY',
  'ESCALATE',
  'REQUIRE_CONFIRMATION',
  'ALLOW',
];

/** `<area>.<operation>`, lower case; underscores and dashes allowed (semantics.md, step 1). */
export const CAPABILITY_NAME_PATTERN = '^[a-z][a-z0-9_-]*(\\.[a-z][a-z0-9_-]*)+$';
export const CAPABILITY_NAME_MAX_LENGTH = 128;

/** An MCP upstream's name is one capability segment, so that it cannot run into the tool's. */
export const MCP_SERVER_NAME_PATTERN = '^[a-z][a-z0-9_-]*$';

export const EVENT_TYPES = [
  'governance.decision',
  'governance.execution',
  'governance.review',
  'policy.created',
  'policy.updated',
  'capability.registered',
  'capability.deleted',
  'policy.deleted',
  'actor.grant.created',
  'actor.grant.revoked',
  // Delegations (issue #38): what a namespace may govern itself.
  'delegation.created',
  'delegation.updated',
  'delegation.deleted',
  // Entries a replica had stored were gone after a Redis failover (asynchronous replication).
  'audit.rollback_detected',
  // The oldest entries were archived to a file and removed from the log (audit archive).
  'audit.archived',
  // The audited configuration, written before an archive run removes the events it was built from.
  'config.snapshot',
  // The tool proxy found an MCP tool's definition other than its pin (once per new definition).
  'mcp.tool.changed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
