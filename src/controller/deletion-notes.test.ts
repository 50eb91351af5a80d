import { describe, expect, it } from 'vitest';
import { DELETED_AT_ANNOTATION, DELETED_BY_ANNOTATION } from '../governance/config-writer.js';
import { DeletionNotes } from './deletion-notes.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const deleted = (name: string, annotations?: Record<string, string>, namespace?: string) => ({
  apiVersion: 'governance.arbiter.dev/v1alpha1',
  kind: 'ActorGrant',
  metadata: { name, ...(namespace ? { namespace } : {}), ...(annotations ? { annotations } : {}) },
});
const marked = (by: string, atMs: number) => ({
  [DELETED_BY_ANNOTATION]: by,
  [DELETED_AT_ANNOTATION]: new Date(atMs).toISOString(),
});

describe('DeletionNotes', () => {
  it('credits a deletion the API marked moments before', () => {
    const notes = new DeletionNotes(() => NOW);
    notes.noteDeleted('ActorGrant', deleted('a', marked('alice', NOW - 1_000)));
    expect(notes.callerOf('ActorGrant/a')).toBe('alice');
    expect(notes.callerOf('Policy/a')).toBeUndefined();
  });

  it('keys a namespaced object by its objectKey, so the same name in two namespaces stays apart', () => {
    const notes = new DeletionNotes(() => NOW);
    notes.noteDeleted('NamespacedActorGrant', deleted('bot', marked('alice', NOW), 'team-a'));
    expect(notes.callerOf('NamespacedActorGrant/team-a/bot')).toBe('alice');
    expect(notes.callerOf('NamespacedActorGrant/team-b/bot')).toBeUndefined();
  });

  it('does not credit an unmarked (kubectl) deletion or a stale mark from a delete that failed', () => {
    const notes = new DeletionNotes(() => NOW);
    notes.noteDeleted('ActorGrant', deleted('plain'));
    notes.noteDeleted('ActorGrant', deleted('stale', marked('alice', NOW - 10 * 60_000)));
    notes.noteDeleted('ActorGrant', deleted('garbled', { [DELETED_BY_ANNOTATION]: 'alice' }));
    expect(notes.callerOf('ActorGrant/plain')).toBeUndefined();
    expect(notes.callerOf('ActorGrant/stale')).toBeUndefined();
    expect(notes.callerOf('ActorGrant/garbled')).toBeUndefined();
  });

  it('forgets notes after two minutes', () => {
    let now = NOW;
    const notes = new DeletionNotes(() => now);
    notes.noteDeleted('ActorGrant', deleted('a', marked('alice', NOW)));
    now += 3 * 60_000;
    notes.noteDeleted('ActorGrant', deleted('b', marked('bob', now)));
    expect(notes.callerOf('ActorGrant/a')).toBeUndefined();
    expect(notes.callerOf('ActorGrant/b')).toBe('bob');
  });
});
