import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit/audit-log.js';
import { chainBrokenNotification, notificationOf, notifies } from './notification.js';
import { slackMessage } from './slack-message.js';

function entry(overrides: Partial<AuditEntry>): AuditEntry {
  return {
    id: 'aud_1',
    seq: 1,
    previous_hash: 'sha256:0',
    hash: 'sha256:1',
    event_type: 'governance.decision',
    timestamp: '2026-11-24T10:00:00.000Z',
    actor_id: 'agent-1',
    capability: 'payments.transfer',
    outcome: 'ESCALATE',
    risk_score: 0.9,
    decision_id: 'd-1',
    policies_evaluated: [],
    policy_matched: null,
    data: {
      decision: { outcome: 'ESCALATE', reason: 'amount > 1000 & <b>', constraints: {}, timestamp: '' },
      expires_at: '2026-11-24T10:15:00.000Z',
      request: { actor: { id: 'agent-1' }, action: { parameters: { iban: 'DE-SECRET' } } },
    },
    ...overrides,
  };
}
const review = (action: string, reviewer = 'alice') =>
  entry({
    id: 'aud_2',
    seq: 2,
    event_type: 'governance.review',
    outcome: null,
    risk_score: null,
    timestamp: '2026-11-24T10:05:00.000Z',
    data: { action, reviewer },
  });

describe('notifications of audit entries', () => {
  it('a decision waiting for review is decision.pending, with no parameter in it', () => {
    const decision = entry({});
    expect(notifies(decision)).toBe(true);
    const n = notificationOf(decision, decision);
    expect(n).toEqual({
      type: 'decision.pending',
      decision_id: 'd-1',
      outcome: 'ESCALATE',
      actor_id: 'agent-1',
      capability: 'payments.transfer',
      reason: 'amount > 1000 & <b>',
      risk_score: 0.9,
      expires_at: '2026-11-24T10:15:00.000Z',
      reviewer: null,
      timestamp: '2026-11-24T10:00:00.000Z',
      audit_ref: 'aud_1',
    });
    expect(JSON.stringify(n)).not.toContain('SECRET');
  });

  it('decisions that need no review, and reviews that are no verdict, make none', () => {
    const allowed = entry({ outcome: 'ALLOW', data: { decision: { outcome: 'ALLOW', reason: 'ok' } } });
    expect(notifies(allowed)).toBe(false);
    expect(notifies(review('confirmation_used'))).toBe(false);
    expect(notifies(entry({ event_type: 'governance.execution', data: {} }))).toBe(false);
    expect(notifies(entry({ event_type: 'policy.created', decision_id: null, data: {} }))).toBe(false);
  });

  it.each([
    ['approve', 'decision.approved'],
    ['deny', 'decision.denied'],
    ['expire', 'decision.expired'],
  ])('a review %s is %s, told with its decision and reviewer', (action, type) => {
    const verdict = review(action);
    expect(notifies(verdict)).toBe(true);
    expect(notificationOf(verdict, entry({}))).toMatchObject({
      type,
      decision_id: 'd-1',
      outcome: 'ESCALATE',
      reason: 'amount > 1000 & <b>',
      reviewer: 'alice',
      timestamp: '2026-11-24T10:05:00.000Z',
      audit_ref: 'aud_2',
    });
  });

  it('a broken chain names where it breaks', () => {
    const n = chainBrokenNotification(
      { seq: 7, entry_id: 'aud_7', reason: 'hash mismatch' },
      new Date('2026-11-24T11:00:00Z'),
    );
    expect(n).toMatchObject({
      type: 'audit.chain_broken',
      decision_id: null,
      reason: 'the audit chain does not hold at seq 7: hash mismatch',
      audit_ref: 'aud_7',
      timestamp: '2026-11-24T11:00:00.000Z',
    });
  });
});

describe('slackMessage', () => {
  it('escapes mrkdwn, and gives a pending decision the commands that review it', () => {
    const decision = entry({});
    const message = slackMessage(notificationOf(decision, decision));
    expect(message.text).toBe(
      'Arbiter decision d-1 (ESCALATE, payments.transfer by agent-1) waits for review',
    );
    const rendered = JSON.stringify(message.blocks);
    expect(rendered).toContain('amount &gt; 1000 &amp; &lt;b&gt;');
    expect(rendered).not.toContain('<b>');
    expect(rendered).toContain('kubectl arbiter approve d-1');
    expect(rendered).toContain('*Expires:* 2026-11-24T10:15:00.000Z');
  });

  it('a verdict has no review commands; a broken chain says so', () => {
    const approved = slackMessage(notificationOf(review('approve'), entry({})));
    expect(approved.text).toContain('was approved');
    expect(JSON.stringify(approved.blocks)).not.toContain('kubectl arbiter approve');
    expect(JSON.stringify(approved.blocks)).toContain('*Reviewer:* alice');
    const broken = slackMessage(chainBrokenNotification({ seq: 3, reason: 'gap' }, new Date(0)));
    expect(broken.text).toBe('Arbiter audit chain verification failed');
  });
});
