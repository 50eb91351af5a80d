import { describe, expect, it } from 'vitest';
import { renderTrail, type DecisionTrail } from './trail-view.js';

const RECEIPT = [
  'arbiter-receipt/v1',
  'decision 3f0c',
  'audit aud_1',
  'actor agent-001',
  'capability mcp.notes.add_note',
  `arguments sha256:${'0'.repeat(64)}`,
  'issued 2026-11-29T10:00:00.000Z',
  '',
  '\u2014 arbiter.example/audit AAAAAQ==',
  '',
].join('\n');

function trail(execution: DecisionTrail['execution']): DecisionTrail {
  return {
    decision_id: '3f0c',
    request: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability: 'mcp.notes.add_note' } },
    evaluation: {
      capability_check: 'pass',
      authority_check: 'pass',
      risk_score: 10,
      risk_threshold: 70,
      policies_evaluated: [],
      policy_matched: null,
      rules: [],
      shadow_decision: null,
    },
    decision: { outcome: 'ALLOW', reason: 'no rule', constraints: {}, timestamp: '2026-11-29T10:00:00.000Z' },
    review: { status: 'not_required', expires_at: null, reviews: [] },
    execution,
    integrity: { audit_ref: 'aud_1', seq: 3, hash: 'sha256:ab', chain_verified: true },
  };
}

describe('renderTrail', () => {
  const forwarded = {
    status: 'completed',
    result_summary: 'added "todo"',
    duration_ms: 3,
    completed_at: '2026-11-29T10:00:00.010Z',
  };

  it('names the signer of the receipt a forwarded call was given, and how to check it', () => {
    const text = renderTrail(trail({ ...forwarded, receipt: RECEIPT }), new Date());
    expect(text).toContain(
      'Receipt:     signed by arbiter.example/audit, issued 2026-11-29T10:00:00.000Z ' +
        '(-o json | jq -r .execution.receipt | arbiter receipt verify --vkey VKEY)',
    );
  });

  it('shows no receipt line for an execution without one', () => {
    expect(renderTrail(trail({ ...forwarded, receipt: null }), new Date())).not.toContain('Receipt:');
    expect(renderTrail(trail(forwarded), new Date())).not.toContain('Receipt:');
    expect(renderTrail(trail(null), new Date())).not.toContain('Receipt:');
  });
});

describe('renderTrail, tenancy', () => {
  it("names a namespaced actor's namespace and the tier that decided", () => {
    const base = trail(null);
    const text = renderTrail(
      {
        ...base,
        namespace: 'team-a',
        request: { ...base.request, actor: { id: 'team-a/bot', type: 'automation' } },
        evaluation: {
          ...base.evaluation,
          tier: 'namespace',
          policies_evaluated: ['guardrails', 'team-a/no-drops'],
          policy_matched: 'team-a/no-drops',
        },
      },
      new Date(),
    );
    expect(text).toContain('Namespace:   team-a\n');
    expect(text).toContain(
      'Policies:    guardrails, team-a/no-drops (decided by: team-a/no-drops, namespace tier)',
    );
  });

  it('shows no namespace for a cluster actor, and no tier when the gate denied before any policy', () => {
    const base = trail(null);
    const text = renderTrail(
      {
        ...base,
        namespace: null,
        evaluation: { ...base.evaluation, authority_check: 'no_grant', tier: null },
      },
      new Date(),
    );
    expect(text).not.toContain('Namespace:');
    expect(text).toContain('Policies:    none (decided by: none)');
    expect(
      renderTrail({ ...base, evaluation: { ...base.evaluation, tier: 'cluster' } }, new Date()),
    ).toContain('(decided by: none, cluster tier)');
  });
});
