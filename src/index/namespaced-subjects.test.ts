import { describe, expect, it } from 'vitest';
import { namespacedSubjects } from './namespaced-subjects.js';

describe('namespacedSubjects', () => {
  it("gives a ServiceAccount without a namespace the grant's own, and keeps one that names it", () => {
    expect(
      namespacedSubjects('team-a', [
        { kind: 'ServiceAccount', name: 'bot' },
        { kind: 'ServiceAccount', name: 'helper', namespace: 'team-a' },
      ]),
    ).toEqual({
      ok: true,
      subjects: [
        { kind: 'ServiceAccount', name: 'bot', namespace: 'team-a' },
        { kind: 'ServiceAccount', name: 'helper', namespace: 'team-a' },
      ],
    });
    expect(namespacedSubjects('team-a', undefined)).toEqual({ ok: true, subjects: [] });
  });

  it('refuses a ServiceAccount of another namespace, naming the first foreign subject and where it is', () => {
    expect(
      namespacedSubjects('team-a', [
        { kind: 'ServiceAccount', name: 'bot' },
        { kind: 'ServiceAccount', name: 'bot', namespace: 'team-b' },
      ]),
    ).toEqual({
      ok: false,
      reason: 'ForeignSubject',
      field: 'spec.actor.subjects[1]',
      message:
        'binds ServiceAccount team-b/bot, but a NamespacedActorGrant in team-a may bind only ServiceAccounts of team-a',
    });
  });

  it('refuses a User', () => {
    expect(namespacedSubjects('team-a', [{ kind: 'User', name: 'alice@example.com' }])).toMatchObject({
      ok: false,
      field: 'spec.actor.subjects[0]',
      message:
        'binds User alice@example.com, but a NamespacedActorGrant in team-a may bind only ServiceAccounts of team-a',
    });
  });
});
