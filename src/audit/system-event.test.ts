import { describe, expect, it } from 'vitest';
import { systemEvent } from './system-event.js';

describe('systemEvent', () => {
  it('is an event of no decision: the decision fields null, no policies, actor and data as given', () => {
    expect(systemEvent('audit.archived', '2025-01-01T00:00:00.000Z', 'admin', { upTo: 7 })).toStrictEqual({
      event_type: 'audit.archived',
      timestamp: '2025-01-01T00:00:00.000Z',
      actor_id: 'admin',
      capability: null,
      outcome: null,
      risk_score: null,
      decision_id: null,
      policies_evaluated: [],
      policy_matched: null,
      data: { upTo: 7 },
    });
  });
});
