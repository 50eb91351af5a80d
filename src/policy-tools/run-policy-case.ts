import { admissions, completeDecision, evaluateProposal, type EngineSettings } from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import type { EngineDecision } from '../model/index.js';
import type { CaseExpectation, PolicyTestCase, RiskExpectation } from './policy-test-suite.js';

export interface CaseResult {
  name: string;
  passed: boolean;
  /** One sentence per expectation that did not hold. */
  failures: string[];
  decision: EngineDecision;
}

/**
 * One case, decided by the server's engine (evaluateProposal and completeDecision) at the
 * case's clock. Each rate limit (the grant's, the namespace's budget) admits the request when
 * fewer than its maximum were already admitted (`priorRequests`), as the server's sliding
 * window would.
 */
export function runPolicyCase(
  snapshot: IndexSnapshot,
  testCase: PolicyTestCase,
  now: Date,
  settings: EngineSettings,
): CaseResult {
  const preliminary = evaluateProposal(snapshot, testCase.proposal, now, settings);
  const prior = testCase.priorRequests ?? 0;
  const decision = completeDecision(
    preliminary,
    admissions(
      preliminary.rateLimits,
      preliminary.rateLimits.map(() => prior),
    ),
  );
  const failures = unmet(testCase.expect, decision);
  return { name: testCase.name, passed: failures.length === 0, failures, decision };
}

function unmet(expect: CaseExpectation, decision: EngineDecision): string[] {
  const failures: string[] = [];
  const { evaluation } = decision;
  const check = (what: string, wanted: unknown, got: unknown) => {
    if (wanted !== undefined && wanted !== got)
      failures.push(`expected ${what} ${JSON.stringify(wanted)}, got ${JSON.stringify(got)}`);
  };
  check('outcome', expect.outcome, decision.outcome);
  check('policy', expect.policy, evaluation.policy_matched);
  check('capabilityCheck', expect.capabilityCheck, evaluation.capability_check);
  check('authorityCheck', expect.authorityCheck, evaluation.authority_check);
  check('tier', expect.tier, evaluation.tier);
  if (expect.riskScore !== undefined && !riskHolds(expect.riskScore, decision.risk_score))
    failures.push(`expected riskScore ${JSON.stringify(expect.riskScore)}, got ${decision.risk_score}`);
  if (expect.reason !== undefined && !decision.reason.includes(expect.reason))
    failures.push(
      `expected the reason to contain ${JSON.stringify(expect.reason)}, got ${JSON.stringify(decision.reason)}`,
    );
  return failures;
}

function riskHolds(expected: RiskExpectation, score: number): boolean {
  if (typeof expected === 'number') return Math.abs(expected - score) < 1e-9;
  return (
    (expected.min === undefined || score >= expected.min) &&
    (expected.max === undefined || score <= expected.max)
  );
}
