import type { ConfigObject } from '../model/index.js';
import { buildIndex } from './build-index.js';
import type { IndexSnapshot } from './index-snapshot.js';

export type IndexChangeListener = (current: IndexSnapshot, previous: IndexSnapshot) => void;

/**
 * Holds the current snapshot. `replace` builds the next one completely before swapping
 * the reference, so a reader that took `current()` keeps a consistent view.
 */
export class IndexStore {
  private snapshot: IndexSnapshot;
  private readonly listeners = new Set<IndexChangeListener>();

  constructor(initial: readonly ConfigObject[] = []) {
    this.snapshot = buildIndex(initial);
  }

  current(): IndexSnapshot {
    return this.snapshot;
  }

  /** Rebuilds from the complete set of objects, reusing what did not change. */
  replace(objects: readonly ConfigObject[]): IndexSnapshot {
    const previous = this.snapshot;
    const next = buildIndex(objects, { previous });
    this.snapshot = next;
    const failures: unknown[] = [];
    for (const listener of this.listeners) {
      try {
        listener(next, previous);
      } catch (err) {
        failures.push(err);
      }
    }
    // The swap stands; a failing listener must not hide it or starve the others.
    if (failures.length > 0) throw new AggregateError(failures, 'an index change listener failed');
    return next;
  }

  /** Called after every replace; returns the unsubscribe function. */
  onChange(listener: IndexChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
