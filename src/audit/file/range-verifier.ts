import { ArbiterError } from '../../model/index.js';
import type { AuditEntry, ChainBreak, ChainHead, Checkpoint } from '../audit-log.js';
import { ChainVerifier } from '../chain-verifier.js';
import type { AuditLogger } from '../audit-logger.js';
import type { EntryIndex } from './entry-index.js';
import { readEntries } from './entry-reader.js';
import type { LogFile } from './log-file.js';

const READ_CHUNK = 1000;

export interface RangeVerifierDeps {
  file: LogFile;
  index: EntryIndex;
  checkpoints: () => Promise<Checkpoint[]>;
  now: () => Date;
  /** How long a verified range is trusted before it is read again. */
  cacheMs: number;
  logger: AuditLogger;
  /** The retention anchor: entries up to it are archived, and it starts every check before the first retained checkpoint. */
  anchor?: ChainHead;
}

interface VerifiedRange {
  upTo: ChainHead;
  checkedAtMs: number;
}

/**
 * isVerified(seq): the chain holds from the nearest checkpoint at or before seq up to seq,
 * and no break is known before seq (a break found by a full verification, or by an
 * earlier range check, makes every later seq unverified). Verified ranges are cached per
 * checkpoint for cacheMs and extended incrementally, so repeated calls read little.
 */
export class RangeVerifier {
  private knownBreak: number | undefined;
  private readonly verified = new Map<number, VerifiedRange>();

  constructor(private readonly deps: RangeVerifierDeps) {}

  /** The result of a full verification replaces what was known. */
  setKnownBreak(seq: number | undefined): void {
    this.knownBreak = seq;
    this.verified.clear();
  }

  async isVerified(seq: number, headSeq: number): Promise<boolean> {
    if (!this.mayHold(seq, headSeq)) return false;
    const start = await this.startFor(seq);
    const nowMs = this.deps.now().getTime();
    const fresh = this.freshRange(start.key, nowMs);
    if (fresh && fresh.upTo.seq >= seq) return true;
    const result = fresh
      ? await this.check(fresh.upTo.seq + 1, seq, fresh.upTo, undefined)
      : await this.check(start.from, seq, start.head, start.checkpoint);
    if ('reason' in result) {
      this.noteBreak(result);
      return false;
    }
    this.verified.set(start.key, { upTo: result, checkedAtMs: fresh ? fresh.checkedAtMs : nowMs });
    return true;
  }

  /**
   * Where a check of seq starts: the nearest retained checkpoint at or before it, else
   * the retention anchor (the entry after it links to it), else genesis. `key` names the
   * start in the cache of verified ranges.
   */
  private async startFor(
    seq: number,
  ): Promise<{ key: number; from: number; head: ChainHead | null; checkpoint: Checkpoint | undefined }> {
    const anchor = this.deps.anchor;
    const checkpoint = (await this.deps.checkpoints())
      .filter((c) => c.seq <= seq && c.seq > (anchor?.seq ?? 0))
      .at(-1);
    if (checkpoint) return { key: checkpoint.seq, from: checkpoint.seq, head: null, checkpoint };
    if (anchor) return { key: anchor.seq, from: anchor.seq + 1, head: anchor, checkpoint: undefined };
    return { key: 0, from: 1, head: null, checkpoint: undefined };
  }

  private mayHold(seq: number, headSeq: number): boolean {
    if (!Number.isSafeInteger(seq) || seq <= (this.deps.anchor?.seq ?? 0) || seq > headSeq) return false;
    return this.knownBreak === undefined || seq < this.knownBreak;
  }

  private freshRange(key: number, nowMs: number): VerifiedRange | undefined {
    const cached = this.verified.get(key);
    return cached && nowMs - cached.checkedAtMs < this.deps.cacheMs ? cached : undefined;
  }

  private noteBreak(found: ChainBreak): void {
    this.deps.logger.warn({ break: found }, 'audit chain break found while checking an entry');
    this.knownBreak = Math.min(this.knownBreak ?? found.seq, found.seq);
  }

  /** Verifies entries from..to; a checkpoint run first checks the checkpointed entry itself. */
  private async check(
    from: number,
    to: number,
    start: ChainHead | null,
    checkpoint: Checkpoint | undefined,
  ): Promise<ChainHead | ChainBreak> {
    const first = this.deps.index.positionOfSeq(from);
    if (first === undefined) return { seq: from, reason: `entry ${from} is missing from the file` };
    let verifier: ChainVerifier | undefined = start ? new ChainVerifier(start) : undefined;
    let last: ChainHead | undefined;
    for (let seq = from; seq <= to; seq += READ_CHUNK) {
      const count = Math.min(READ_CHUNK, to - seq + 1);
      const positions = Array.from({ length: count }, (_, i) => first + (seq - from) + i);
      const entries = await this.read(positions);
      if (!Array.isArray(entries)) return entries;
      for (const entry of entries) {
        // From a checkpoint: its entry's own link is trusted, its hash must be the checkpoint's.
        verifier ??= new ChainVerifier(
          checkpoint ? { seq: entry.seq - 1, hash: entry.previous_hash } : null,
          checkpoint ? [checkpoint] : [],
        );
        const found = verifier.push(entry);
        if (found) return found;
        last = { seq: entry.seq, hash: entry.hash };
      }
    }
    if (!last || last.seq !== to) return { seq: to, reason: `entry ${to} was not found where expected` };
    return last;
  }

  private async read(positions: number[]): Promise<AuditEntry[] | ChainBreak> {
    const size = this.deps.index.size;
    const inFile = positions.filter((p) => p < size);
    try {
      return await readEntries(this.deps.file, this.deps.index, inFile);
    } catch (err) {
      if (!(err instanceof ArbiterError)) throw err;
      const seq = (err.details as { seq?: number } | undefined)?.seq ?? 0;
      return { seq, reason: err.message };
    }
  }
}
