import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit/audit-log.js';
import { pendingQueueEvent } from './pending-events.js';

const entry = (overrides: Partial<AuditEntry>): AuditEntry =>
  ({ seq: 7, decision_id: 'd-1', outcome: null, data: {}, ...overrides }) as AuditEntry;

describe('the live pending queue', () => {
  it('says when a decision starts waiting: ESCALATE and REQUIRE_CONFIRMATION only', () => {
    for (const outcome of ['ESCALATE', 'REQUIRE_CONFIRMATION'] as const)
      expect(pendingQueueEvent(entry({ event_type: 'governance.decision', outcome }))).toEqual({
        id: 7,
        event: 'decision.pending',
        data: { decision_id: 'd-1', outcome },
      });
    for (const outcome of ['ALLOW', 'DENY'] as const)
      expect(pendingQueueEvent(entry({ event_type: 'governance.decision', outcome }))).toBeUndefined();
  });

  it('says when a review or an expiry settles it, not when an approval is used', () => {
    const review = (action: string) =>
      pendingQueueEvent(entry({ event_type: 'governance.review', data: { action } }));
    expect(review('approve')?.data).toEqual({ decision_id: 'd-1', status: 'approved' });
    expect(review('deny')?.data).toEqual({ decision_id: 'd-1', status: 'denied' });
    expect(review('expire')).toEqual({
      id: 7,
      event: 'decision.settled',
      data: { decision_id: 'd-1', status: 'expired' },
    });
    expect(review('confirmation_used')).toBeUndefined();
    expect(pendingQueueEvent(entry({ event_type: 'governance.execution' }))).toBeUndefined();
    expect(
      pendingQueueEvent(entry({ event_type: 'capability.registered', decision_id: null })),
    ).toBeUndefined();
  });
});
