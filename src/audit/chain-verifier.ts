import type { AuditEntry, ChainBreak, ChainHead, Checkpoint, VerifyReport } from './audit-log.js';
import { GENESIS_HASH, hashEntry } from './chain.js';
import type { SealedLink } from './sealed-link.js';

/**
 * Streaming verification of a run of entries: feed them in seq order with push().
 * It checks each entry's own hash, its link to the previous one, that seq has no gap,
 * and that every checkpoint inside the run names the hash found at its seq. Pure: the
 * backends and the offline `arbiter audit verify` share it.
 */
export class ChainVerifier {
  private previous: ChainHead;
  private checked = 0;
  private checkpointsChecked = 0;
  private firstBreak: ChainBreak | undefined;
  private readonly checkpointsBySeq: Map<number, Checkpoint>;

  /** start: the verified entry just before the run (a checkpoint), or genesis. */
  constructor(start: ChainHead | null, checkpoints: readonly Checkpoint[] = []) {
    this.previous = start ?? { seq: 0, hash: GENESIS_HASH };
    this.checkpointsBySeq = new Map(checkpoints.map((c) => [c.seq, c]));
  }

  /** Returns the break found at this entry, if any; verification stops at the first break. */
  push(entry: AuditEntry): ChainBreak | undefined {
    return this.accept(entry, entry);
  }

  /** The same for an entry whose own hash sealedLink() has proven from its stored bytes. */
  pushSealed(link: SealedLink): ChainBreak | undefined {
    return this.accept(link, undefined);
  }

  /** unsealed: the entry whose hash is still to be recomputed; undefined once proven. */
  private accept(entry: SealedLink, unsealed: AuditEntry | undefined): ChainBreak | undefined {
    if (this.firstBreak) return this.firstBreak;
    const found = this.check(entry, unsealed);
    if (found) {
      this.firstBreak = found;
      return found;
    }
    this.checked += 1;
    this.previous = { seq: entry.seq, hash: entry.hash };
    return undefined;
  }

  get broken(): ChainBreak | undefined {
    return this.firstBreak;
  }

  /**
   * Closes the run. Checkpoints beyond the last entry mean the log lost its tail.
   */
  finish(): VerifyReport {
    if (!this.firstBreak) {
      const beyond = [...this.checkpointsBySeq.values()]
        .filter((c) => c.seq > this.previous.seq)
        .sort((a, b) => a.seq - b.seq)[0];
      if (beyond) {
        this.firstBreak = {
          seq: this.previous.seq + 1,
          reason: `log ends at seq ${this.previous.seq} but checkpoint ${beyond.seq} exists: entries were truncated`,
        };
      }
    }
    return {
      ok: this.firstBreak === undefined,
      entries_checked: this.checked,
      head: this.previous,
      checkpoints_checked: this.checkpointsChecked,
      ...(this.firstBreak ? { break: this.firstBreak } : {}),
    };
  }

  private check(entry: SealedLink, unsealed: AuditEntry | undefined): ChainBreak | undefined {
    if (entry.seq !== this.previous.seq + 1) {
      return {
        seq: this.previous.seq + 1,
        reason: `expected seq ${this.previous.seq + 1}, found ${entry.seq}: entries missing or reordered`,
      };
    }
    if (entry.previous_hash !== this.previous.hash) {
      return breakAt(entry, `previous_hash does not match the hash of entry ${this.previous.seq}`);
    }
    if (unsealed !== undefined && hashEntry(unsealed) !== unsealed.hash) {
      return breakAt(entry, 'hash does not match the entry contents: the entry was altered');
    }
    const checkpoint = this.checkpointsBySeq.get(entry.seq);
    if (checkpoint) {
      this.checkpointsChecked += 1;
      if (checkpoint.hash !== entry.hash) {
        return breakAt(entry, `checkpoint at seq ${entry.seq} names another hash: the log was rewritten`);
      }
    }
    return undefined;
  }
}

function breakAt(entry: SealedLink, reason: string): ChainBreak {
  return { seq: entry.seq, entry_id: entry.id, reason };
}
