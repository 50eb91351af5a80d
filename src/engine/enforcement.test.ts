import { describe, expect, it } from 'vitest';
import { completeDecision } from './complete-decision.js';
import { resolveEngineSettings } from './engine-settings.js';
import { evaluateProposal } from './evaluate-proposal.js';
import { NOON_UTC, policy, proposal, REFUSED, world } from './test-fixtures.js';
import type { EnforcementAction, PolicyRuleSpec } from '../model/index.js';

const settings = resolveEngineSettings();
const inMode = (name: string, enforcementAction: EnforcementAction, rules: PolicyRuleSpec[]) => {
  const object = policy(name, rules);
  return { ...object, spec: { ...object.spec, enforcementAction } };
};
const decide = (...policies: ReturnType<typeof policy>[]) =>
  completeDecision(
    evaluateProposal(world(...policies), proposal('files.read', { path: '/etc' }), NOON_UTC, settings),
    true,
  );

describe('enforcement modes', () => {
  it('audit: the rule never decides; the trail records what it would have decided', () => {
    const decided = decide(
      inMode('trial', 'audit', [{ capability: 'files.read', outcome: 'DENY', priority: 50 }]),
    );
    expect(decided.outcome).toBe('ALLOW');
    expect(decided.evaluation.policy_matched).toBeNull();
    expect(decided.evaluation.shadow_decision).toEqual({
      outcome: 'DENY',
      policy: 'trial',
      rule_index: 0,
      enforcement: 'audit',
    });
    expect(decided.evaluation.rules).toEqual([
      expect.objectContaining({ policy: 'trial', matched: true, enforcement: 'audit' }),
    ]);
    expect(decided.warnings).toBeUndefined();
  });

  it('warn: the outcome stands, and the caller is told what the policy would have decided', () => {
    const decided = decide(
      inMode('trial', 'warn', [
        { capability: 'files.read', condition: "parameters.path == '/etc'", outcome: 'ESCALATE' },
      ]),
    );
    expect(decided.outcome).toBe('ALLOW');
    expect(decided.warnings).toEqual([
      'policy trial (enforcementAction warn), rule 0, would have decided ESCALATE',
    ]);
  });

  it('an enforced rule still decides; a shadow rule that would decide the same is not reported', () => {
    const enforced = policy('real', [{ capability: 'files.read', outcome: 'DENY', priority: 10 }]);
    const same = decide(
      enforced,
      inMode('trial', 'audit', [{ capability: 'files.read', outcome: 'DENY', priority: 99 }]),
    );
    expect(same).toMatchObject({ outcome: 'DENY', evaluation: { policy_matched: 'real' } });
    expect(same.evaluation.shadow_decision).toBeUndefined();
    const looser = decide(
      enforced,
      inMode('trial', 'audit', [{ capability: 'files.read', outcome: 'ALLOW', priority: 99 }]),
    );
    expect(looser.outcome).toBe('DENY');
    expect(looser.evaluation.shadow_decision).toMatchObject({ outcome: 'ALLOW', policy: 'trial' });
  });

  it('a rate-limited DENY carries no shadow decision (the policies did not decide it)', () => {
    const snapshot = world(inMode('trial', 'warn', [{ capability: 'files.read', outcome: 'DENY' }]));
    const preliminary = evaluateProposal(snapshot, proposal('files.read', {}), NOON_UTC, settings);
    const limited = completeDecision(
      { ...preliminary, rateLimits: [{ scope: 'grant', key: 'k', maxRequests: 1, windowSeconds: 60 }] },
      REFUSED,
    );
    expect(limited.evaluation.authority_check).toBe('rate_limited');
    expect(limited.evaluation.shadow_decision).toBeUndefined();
  });
});
