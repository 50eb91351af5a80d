import type { Checkpoint } from '../audit-log.js';

/** An entry an archive run must leave in the log, and why (the run's message says it). */
export interface KeptEntry {
  seq: number;
  reason: string;
}

/**
 * What the layers above the log still need of the entries an archive run would remove:
 * the log cannot tell which entries are in use. cli/ composes them (from governance/).
 */
export interface ArchiveKeepers {
  /** The oldest entry still in use (a decision waiting for review): the cut stays before it. */
  oldestInUse(): Promise<KeptEntry | undefined>;
  /**
   * Records past the cut, before anything is removed, what the entries up to it establish
   * that is needed later (the audited configuration). A rerun calls it again.
   */
  carryOver(cut: Checkpoint, actor: string): Promise<void>;
}
