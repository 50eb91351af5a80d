import { describe, expect, it } from 'vitest';
import type { DelegationSpec, RiskLevel } from '../model/index.js';
import { reviewNamespace, type ReviewedDecision } from './review-namespace.js';

const delegations = (reviewers?: RiskLevel) => ({
  delegationOf: (namespace: string) =>
    namespace === 'team-a'
      ? {
          name: 'team-a',
          spec: {
            namespaces: ['team-a'],
            capabilities: ['deploy.*'],
            maxRiskLevel: 'critical',
            ...(reviewers ? { reviewers: { maxRiskLevel: reviewers } } : {}),
          } satisfies DelegationSpec,
        }
      : undefined,
});

const escalated = (evaluation: ReviewedDecision['evaluation'], actorId = 'team-a/bot'): ReviewedDecision => ({
  actorId,
  evaluation,
});

describe('reviewNamespace', () => {
  it('names the actor’s namespace for a namespace-tier or risk-override escalation within reviewers.maxRiskLevel', () => {
    const snapshot = delegations('medium');
    expect(reviewNamespace(escalated({ tier: 'namespace', capability_risk_level: 'low' }), snapshot)).toBe(
      'team-a',
    );
    expect(
      reviewNamespace(escalated({ risk_override: true, capability_risk_level: 'medium' }), snapshot),
    ).toBe('team-a');
  });

  it.each<[string, ReviewedDecision, RiskLevel | undefined]>([
    ['a cluster-tier escalation', escalated({ tier: 'cluster', capability_risk_level: 'low' }), 'high'],
    [
      'no tier and no risk override',
      escalated({ risk_override: false, capability_risk_level: 'low' }),
      'high',
    ],
    [
      'a capability riskier than the reviewers may settle',
      escalated({ tier: 'namespace', capability_risk_level: 'high' }),
      'medium',
    ],
    ['no recorded risk level', escalated({ tier: 'namespace' }), 'critical'],
    [
      'a Delegation without reviewers',
      escalated({ tier: 'namespace', capability_risk_level: 'low' }),
      undefined,
    ],
    [
      'a namespace without a Delegation',
      escalated({ tier: 'namespace', capability_risk_level: 'low' }, 'team-b/bot'),
      'critical',
    ],
    [
      'a cluster actor',
      escalated({ tier: 'namespace', capability_risk_level: 'low' }, 'agent-1'),
      'critical',
    ],
  ])('leaves %s to cluster reviewers', (_name, decision, reviewers) => {
    expect(reviewNamespace(decision, delegations(reviewers))).toBeUndefined();
  });
});
