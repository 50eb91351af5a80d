import type { Outcome, RuleEvaluation } from '../model/index.js';

const VERB: Record<Outcome, string> = {
  ALLOW: 'Allowed',
  DENY: 'Denied',
  ESCALATE: 'Escalated for review',
  REQUIRE_CONFIRMATION: 'Confirmation required',
};

/** The sentence for a decision reached by policy evaluation (before the risk override). */
export function policyReason(winner: RuleEvaluation | null, defaultOutcome: Outcome): string {
  if (!winner)
    return defaultOutcome === 'ALLOW'
      ? 'No policy rule matched; the grant authorizes the action.'
      : 'No policy rule matched, and this server denies what no rule allows.';
  const by = `${VERB[winner.outcome]} by policy ${winner.policy} (rule ${winner.rule_index}, priority ${winner.priority})`;
  return winner.error === undefined
    ? `${by}.`
    : `${by}: its condition could not be evaluated (${winner.error}), and a condition that fails never lifts a restriction.`;
}

export function riskOverrideReason(base: string, riskScore: number, threshold: number): string {
  return `Escalated for review: the risk score ${riskScore} exceeds the threshold ${threshold}. ${base}`;
}
