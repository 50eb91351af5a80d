import { describe, expect, it } from 'vitest';
import { systemEvent } from './system-event.js';

describe('systemEvent', () => {
  it('is an event of no decision: its decision fields null, no policies, the actor and data as given', () => {
    const time = '2025-01-01T00:00:00.000Z';
    const data = { upTo: 7 };
    const { event_type, timestamp, actor_id, policies_evaluated, ...rest } = systemEvent(
      'audit.archived',
      time,
      'admin',
      data,
    );
    expect([event_type, timestamp, actor_id, rest.data]).toEqual(['audit.archived', time, 'admin', data]);
    expect(policies_evaluated).toEqual([]);
    const { data: _data, ...decision } = rest;
    expect(Object.entries(decision).sort()).toEqual(
      ['capability', 'decision_id', 'outcome', 'policy_matched', 'risk_score'].map((field) => [field, null]),
    );
  });
});
