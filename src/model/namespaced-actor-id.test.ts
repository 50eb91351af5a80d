import { describe, expect, it } from 'vitest';
import {
  LOCAL_ACTOR_ID_MAX_LENGTH,
  namespacedActorId,
  parseNamespacedActorId,
} from './namespaced-actor-id.js';

describe('namespaced actor ids', () => {
  it('joins a namespace and a local id with a slash, and parses it back', () => {
    expect(namespacedActorId('team-a', 'bot')).toBe('team-a/bot');
    expect(parseNamespacedActorId('team-a/bot')).toEqual({ namespace: 'team-a', localId: 'bot' });
    const longest = namespacedActorId('n'.repeat(63), 'x'.repeat(LOCAL_ACTOR_ID_MAX_LENGTH));
    expect(longest).toHaveLength(256); // what the API accepts as an actor id
    expect(parseNamespacedActorId(longest)).toEqual({
      namespace: 'n'.repeat(63),
      localId: 'x'.repeat(LOCAL_ACTOR_ID_MAX_LENGTH),
    });
  });

  it('reads an id without a slash as a cluster actor, as today', () => {
    expect(parseNamespacedActorId('agent-1')).toBeUndefined();
  });

  it('reads an id whose part before the slash is no Kubernetes namespace name as a cluster actor', () => {
    for (const id of ['Team-A/bot', '-team/bot', 'team-/bot', 'team.a/bot', `${'n'.repeat(64)}/bot`, '/bot'])
      expect(parseNamespacedActorId(id), id).toBeUndefined();
  });

  it('reads an id with an empty, slashed or too long local part as a cluster actor', () => {
    for (const id of ['team-a/', 'team-a/b/c', `team-a/${'x'.repeat(LOCAL_ACTOR_ID_MAX_LENGTH + 1)}`])
      expect(parseNamespacedActorId(id), id).toBeUndefined();
  });

  it('refuses to build an id that would not parse back', () => {
    expect(() => namespacedActorId('Team', 'bot')).toThrow(/namespace/);
    expect(() => namespacedActorId('team-a', 'a/b')).toThrow(/local actor id/);
    expect(() => namespacedActorId('team-a', '')).toThrow(/local actor id/);
  });
});
