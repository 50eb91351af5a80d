import { describe, expect, it } from 'vitest';
import { recordNamespace } from './record-namespace.js';

describe('recordNamespace', () => {
  it.each([
    [
      'a namespaced actor’s decision',
      { event_type: 'governance.decision', actor_id: 'team-a/bot' },
      'team-a',
    ],
    ['its review', { event_type: 'governance.review', actor_id: 'team-a/bot' }, 'team-a'],
    ['a decision without an event type', { actor_id: 'team-b/bot' }, 'team-b'],
    ['a cluster actor’s decision', { event_type: 'governance.decision', actor_id: 'agent-1' }, undefined],
    [
      'an id whose first part is no namespace',
      { event_type: 'governance.decision', actor_id: 'A/b' },
      undefined,
    ],
    [
      'a cluster configuration entry by a caller with a slash',
      { event_type: 'policy.created', actor_id: 'team-a/x' },
      undefined,
    ],
    [
      'a namespaced configuration entry',
      { event_type: 'policy.created', actor_id: 'admin', namespace: 'team-c' },
      'team-c',
    ],
    [
      'a recorded namespace over the actor id',
      { event_type: 'governance.decision', actor_id: 'team-a/bot', namespace: 'team-a' },
      'team-a',
    ],
    ['a checkpoint-like system entry', { event_type: 'audit.archived', actor_id: null }, undefined],
  ])('%s', (_name, record, expected) => {
    expect(recordNamespace(record)).toBe(expected);
  });
});
