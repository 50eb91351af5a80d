import type { KubernetesObject } from '@kubernetes/client-node';
import { DELETED_AT_ANNOTATION, DELETED_BY_ANNOTATION } from '../governance/config-writer.js';
import { kindKey, type Kind } from '../model/index.js';

/** How long a deletion mark counts, and how long a noted caller waits to be audited. */
const MAX_AGE_MS = 120_000;

/**
 * Who deleted what through the API, read from the final state that the watch's delete
 * event carries (the API marks an object with its caller and the time just before
 * deleting it). The leader audits deletions with it; a mark older than two minutes is
 * stale (a delete that failed) and a kubectl delete keeps the fallback caller.
 */
export class DeletionNotes {
  private readonly notes = new Map<string, { caller: string; notedMs: number }>();

  constructor(private readonly clock: () => number) {}

  noteDeleted(kind: Kind, object: KubernetesObject): void {
    const now = this.clock();
    for (const [key, note] of this.notes) if (now - note.notedMs > MAX_AGE_MS) this.notes.delete(key);
    const annotations = object.metadata?.annotations ?? {};
    const caller = annotations[DELETED_BY_ANNOTATION];
    const markedMs = Date.parse(annotations[DELETED_AT_ANNOTATION] ?? '');
    if (!caller || Number.isNaN(markedMs) || Math.abs(now - markedMs) > MAX_AGE_MS) return;
    this.notes.set(kindKey(kind, object.metadata?.name ?? '', object.metadata?.namespace), {
      caller,
      notedMs: now,
    });
  }

  /** The API caller who deleted the object of this objectKey, if the deletion was marked. */
  callerOf(key: string): string | undefined {
    return this.notes.get(key)?.caller;
  }
}
