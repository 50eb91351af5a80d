import type { RuleEvaluation, ShadowDecision, Tier } from '../model/proposal.js';
import { expiresIn } from './pending-table.js';

/** A decision's trail as GET /audit/log/:decision_id answers it (src/api/routes/audit.ts). */
export interface DecisionTrail {
  decision_id: string;
  /** The actor's namespace (`team-a/bot`); null for cluster actors; absent from older servers. */
  namespace?: string | null;
  request: {
    actor: { id: string; type: string };
    action: { capability: string; parameters?: Record<string, unknown> };
    context?: Record<string, unknown>;
  };
  evaluation: {
    capability_check: string;
    authority_check: string;
    /** Which tier's policies decided; null when none was asked; absent from older servers. */
    tier?: Tier | null;
    risk_score: number;
    risk_threshold: number;
    policies_evaluated: string[];
    policy_matched: string | null;
    rules: RuleEvaluation[];
    shadow_decision: ShadowDecision | null;
  };
  decision: { outcome: string; reason: string; constraints: Record<string, unknown>; timestamp: string };
  review: {
    status: string;
    expires_at: string | null;
    reviews: { action: string; reviewer: string; comment: string | null; timestamp: string }[];
  };
  execution: {
    status: string;
    result_summary: string | null;
    duration_ms: number | null;
    completed_at: string;
    /** The signed receipt the tool proxy sent upstream with the call, if any. */
    receipt?: string | null;
  } | null;
  integrity: { audit_ref: string; seq: number; hash: string; chain_verified: boolean };
}

const LABEL_WIDTH = 13;

/** `kubectl arbiter get ID`: the trail as labelled lines, the way `kubectl describe` reads. */
export function renderTrail(trail: DecisionTrail, now: Date): string {
  const { request, evaluation, decision } = trail;
  const lines = [
    field('Decision', trail.decision_id),
    field('Outcome', decision.outcome),
    field('Reason', decision.reason),
    field('Time', decision.timestamp),
    field('Actor', `${request.actor.id} (${request.actor.type})`),
    ...(trail.namespace ? [field('Namespace', trail.namespace)] : []),
    field('Capability', request.action.capability),
    field('Parameters', JSON.stringify(request.action.parameters ?? {})),
    ...optionalObject('Context', request.context),
    ...optionalObject('Constraints', decision.constraints),
    field('Checks', `capability ${evaluation.capability_check}, authority ${evaluation.authority_check}`),
    field('Risk', `${evaluation.risk_score} (threshold ${evaluation.risk_threshold})`),
    field('Policies', policiesLine(evaluation)),
    ...ruleLines(evaluation.rules),
    ...shadowLines(evaluation.shadow_decision),
    ...reviewLines(trail.review, now),
    field('Execution', executionLine(trail.execution)),
    ...receiptLines(trail.execution?.receipt),
    field('Audit', integrityLine(trail.integrity)),
  ];
  return lines.join('\n') + '\n';
}

export function field(label: string, value: string): string {
  return `${`${label}:`.padEnd(LABEL_WIDTH)}${value}`;
}

function optionalObject(label: string, value: Record<string, unknown> | undefined): string[] {
  return value && Object.keys(value).length > 0 ? [field(label, JSON.stringify(value))] : [];
}

function policiesLine(evaluation: DecisionTrail['evaluation']): string {
  const evaluated =
    evaluation.policies_evaluated.length > 0 ? evaluation.policies_evaluated.join(', ') : 'none';
  const tier = evaluation.tier ? `, ${evaluation.tier} tier` : '';
  return `${evaluated} (decided by: ${evaluation.policy_matched ?? 'none'}${tier})`;
}

function ruleLines(rules: readonly RuleEvaluation[]): string[] {
  return rules.map((rule) => {
    const state = rule.error ? `error: ${rule.error}` : rule.matched ? 'matched' : 'not matched';
    const mode = rule.enforcement ? ` [${rule.enforcement}]` : '';
    return `  ${rule.policy} rule ${rule.rule_index}, priority ${rule.priority}: ${rule.outcome}, ${state}${mode}`;
  });
}

function shadowLines(shadow: ShadowDecision | null): string[] {
  if (!shadow) return [];
  const by = `policy ${shadow.policy} rule ${shadow.rule_index}, enforcementAction ${shadow.enforcement}`;
  return [field('Would be', `${shadow.outcome} if enforced (${by})`)];
}

export function reviewLines(review: DecisionTrail['review'], now: Date): string[] {
  const deadline =
    review.status === 'pending' && review.expires_at
      ? `, expires in ${expiresIn(review.expires_at, now)} (${review.expires_at})`
      : '';
  return [
    field('Review', `${review.status}${deadline}`),
    ...review.reviews.map(
      (r) =>
        `  ${r.timestamp} ${r.action} by ${r.reviewer}${r.comment ? `: ${JSON.stringify(r.comment)}` : ''}`,
    ),
  ];
}

function executionLine(execution: DecisionTrail['execution']): string {
  if (!execution) return 'not reported';
  const summary = execution.result_summary ? `: ${execution.result_summary}` : '';
  const duration = execution.duration_ms === null ? '' : ` (${execution.duration_ms} ms)`;
  return `${execution.status}${summary}${duration} at ${execution.completed_at}`;
}

/** Who signed a forwarded call's receipt, and when; the note itself is in -o json. */
function receiptLines(receipt: string | null | undefined): string[] {
  if (!receipt) return [];
  const signer = /^\u2014 (\S+) /m.exec(receipt)?.[1] ?? 'an unnamed key';
  const issued = /^issued (\S+)$/m.exec(receipt)?.[1];
  const check = '-o json | jq -r .execution.receipt | arbiter receipt verify --vkey VKEY';
  return [field('Receipt', `signed by ${signer}${issued ? `, issued ${issued}` : ''} (${check})`)];
}

function integrityLine(integrity: DecisionTrail['integrity']): string {
  const verified = integrity.chain_verified ? 'chain verified' : 'chain NOT verified';
  return `${integrity.audit_ref}, seq ${integrity.seq}, ${integrity.hash}, ${verified}`;
}
