import type { AuditEntry, ChainBreak, ChainHead, Checkpoint, VerifyReport } from './audit-log.js';
import { ChainVerifier } from './chain-verifier.js';
import { GENESIS_HASH } from './chain.js';
import { parseEntryLine, type ParsedLine } from './entry-shape.js';
import { sealedLink, type SealedLink } from './sealed-link.js';

/** Where the verified run starts and why it is trusted. */
export interface VerifyStart extends ChainHead {
  /** genesis: from seq 1; given: the caller's head; first-entry: the first entry's previous_hash, unchecked. */
  trusted: 'genesis' | 'given' | 'first-entry';
}

export interface LineChainBreak extends ChainBreak {
  /** 1-based line number of the export where the break was found; absent for a truncated tail. */
  line?: number;
}

export interface LineVerifyReport extends VerifyReport {
  break?: LineChainBreak;
  /** Non-blank lines read. */
  lines: number;
  /** Line numbers that hold no audit entry (first 100). */
  unparsable_lines: number[];
  start: VerifyStart;
  /** Caveats a reader must know, e.g. that a mid-chain start was taken on trust. */
  notes: string[];
}

export interface LineVerifyOptions {
  checkpoints?: readonly Checkpoint[];
  /** The head just before the first entry, when known (e.g. a checkpoint or a retention anchor). */
  start?: ChainHead | undefined;
}

const MAX_LISTED_UNPARSABLE = 100;
const OPENING_BRACE = 0x7b;

/**
 * Verifies a chain given as JSON Lines, one line at a time: unparsable lines and chain
 * breaks are reported with their line number. Blank lines are ignored. After the first
 * break the chain is not checked further, but unparsable lines are still listed.
 */
export class LineChainVerifier {
  private chain: ChainVerifier | undefined;
  private startHead: VerifyStart | undefined;
  private firstBreak: LineChainBreak | undefined;
  private lines = 0;
  private lastGoodSeq: number | undefined;
  private readonly unparsable: number[] = [];

  constructor(private readonly options: LineVerifyOptions = {}) {}

  pushLine(text: string, lineNumber: number): void {
    // An entry starts with its brace: only other lines need the blank test.
    if (text.charCodeAt(0) !== OPENING_BRACE && text.trim() === '') return;
    // Stored bytes that prove their own hash need no parse; anything else takes the full path.
    const link = this.firstBreak ? undefined : sealedLink(text);
    if (link) this.pushChecked(link, lineNumber, undefined);
    else this.pushParsed(parseEntryLine(text), lineNumber);
  }

  /** For callers that parsed the (non-blank) line already; `text` lets its bytes prove its hash. */
  pushParsed(parsed: ParsedLine, lineNumber: number, text?: string): void {
    if (parsed.kind === 'invalid') {
      this.lines += 1;
      if (this.unparsable.length < MAX_LISTED_UNPARSABLE) this.unparsable.push(lineNumber);
      this.recordBreak({
        seq: this.expectedSeq(),
        reason: `line ${lineNumber}: ${parsed.reason}`,
        line: lineNumber,
      });
      return;
    }
    const { entry } = parsed;
    const link = text === undefined || this.firstBreak ? undefined : sealedLink(text);
    if (link) this.pushChecked(link, lineNumber, undefined);
    else this.pushChecked(entry, lineNumber, entry);
  }

  /** unsealed: the parsed entry whose hash is still to be recomputed; undefined once its bytes proved it. */
  private pushChecked(link: SealedLink, lineNumber: number, unsealed: AuditEntry | undefined): void {
    this.lines += 1;
    if (this.firstBreak) return;
    const chain = this.chainFor(link);
    const found = unsealed === undefined ? chain.pushSealed(link) : chain.push(unsealed);
    if (found) this.recordBreak({ ...found, line: lineNumber });
    else this.lastGoodSeq = link.seq;
  }

  finish(): LineVerifyReport {
    const report = (this.chain ?? this.chainFor(undefined)).finish();
    const start = this.startHead ?? { seq: 0, hash: GENESIS_HASH, trusted: 'genesis' as const };
    const notes =
      start.trusted === 'first-entry'
        ? [
            `export starts mid-chain at seq ${start.seq + 1}: its previous_hash was trusted, not verified; pass a start head or a checkpoint at seq ${start.seq} to check it`,
          ]
        : [];
    const brk = this.firstBreak ?? report.break;
    return {
      ...report,
      ok: brk === undefined,
      ...(brk ? { break: brk } : {}),
      lines: this.lines,
      unparsable_lines: [...this.unparsable],
      start,
      notes,
    };
  }

  private recordBreak(found: LineChainBreak): void {
    this.firstBreak ??= found;
  }

  private expectedSeq(): number {
    return (this.lastGoodSeq ?? this.startHead?.seq ?? this.options.start?.seq ?? 0) + 1;
  }

  private chainFor(first: Pick<SealedLink, 'seq' | 'previous_hash'> | undefined): ChainVerifier {
    if (this.chain) return this.chain;
    const checkpoints = this.options.checkpoints ?? [];
    if (this.options.start) {
      this.startHead = { ...this.options.start, trusted: 'given' };
    } else if (first && first.seq > 1) {
      this.startHead = { seq: first.seq - 1, hash: first.previous_hash, trusted: 'first-entry' };
    } else {
      this.startHead = { seq: 0, hash: GENESIS_HASH, trusted: 'genesis' };
    }
    this.chain = new ChainVerifier(this.startHead.trusted === 'genesis' ? null : this.startHead, checkpoints);
    return this.chain;
  }
}

/** Verifies an export (JSON Lines, oldest first) as a stream; line numbers are 1-based. */
export async function verifyExportStream(
  lines: AsyncIterable<string>,
  options: LineVerifyOptions = {},
): Promise<LineVerifyReport> {
  const verifier = new LineChainVerifier(options);
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    verifier.pushLine(line, lineNumber);
  }
  return verifier.finish();
}
