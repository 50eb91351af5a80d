import { constants } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ArbiterError } from '../../model/index.js';
import type { AuditEntry, RetentionAnchor } from '../audit-log.js';
import { parseEntryLine } from '../entry-shape.js';
import type { HeadSnapshot } from './checkpointer.js';
import { EntryIndex } from './entry-index.js';
import type { LogFile, OpenLogFile } from './log-file.js';
import { scanLines, type ScannedLine } from './log-scan.js';

/** The copy being built; renamed over audit.jsonl once complete. A leftover one is rebuilt. */
export const RETAINED_COPY_FILE = 'audit.jsonl.trim';

const COPY_CHUNK = 1 << 20;

/**
 * Where the retained part of the log file starts: the byte after the anchor's line.
 * Undefined when the file starts after the anchor (nothing to remove). The anchor's line
 * must hold the anchor's entry: a file that does not is never cut.
 */
export async function retainedStart(file: LogFile, anchor: RetentionAnchor): Promise<number | undefined> {
  let first = true;
  for await (const line of scanLines(file)) {
    if (line.text.trim() === '') continue;
    const parsed = parseEntryLine(line.text);
    const entry = parsed.kind === 'entry' ? parsed.entry : undefined;
    if (first && entry && entry.seq > anchor.seq) return undefined;
    first = false;
    if (entry?.seq === anchor.seq) return endOfAnchorLine(entry, line, anchor);
    if (!entry || entry.seq > anchor.seq) {
      throw new ArbiterError(
        'CONFLICT',
        `the audit log has no entry ${anchor.seq} before byte ${line.offset}: not cut at the retention anchor`,
      );
    }
  }
  if (first) return undefined;
  throw new ArbiterError('CONFLICT', `the audit log ends before the retention anchor's entry ${anchor.seq}`);
}

function endOfAnchorLine(entry: AuditEntry, line: ScannedLine, anchor: RetentionAnchor): number {
  if (entry.hash !== anchor.hash || entry.id !== anchor.entry_id) {
    throw new ArbiterError(
      'CONFLICT',
      `audit entry ${anchor.seq} is not the retention anchor's (hash ${entry.hash}): not cut`,
    );
  }
  return line.offset + line.length + 1;
}

/**
 * The log without its archived head, built beside it and renamed over it: a crash leaves
 * the old file or the new, never half of one. Copying and indexing can go on while the
 * log still takes appends; only the last bytes and the rename need the writer paused.
 */
export class RetainedCopy {
  readonly index = new EntryIndex();
  head: HeadSnapshot | undefined;
  /** Bytes of the source copied so far, counted from the cut. */
  private copied = 0;
  private indexed = 0;

  private constructor(
    private readonly source: () => LogFile,
    private readonly cut: number,
    private readonly copy: LogFile,
    private readonly path: string,
    private readonly target: string,
  ) {}

  static async begin(options: {
    dir: string;
    target: string;
    source: () => LogFile;
    cut: number;
    openFile: OpenLogFile;
  }): Promise<RetainedCopy> {
    const path = join(options.dir, RETAINED_COPY_FILE);
    const copy = await options.openFile(path);
    await copy.truncate(0);
    return new RetainedCopy(options.source, options.cut, copy, path, options.target);
  }

  /** Copies the source up to byte `end` and indexes what it copied. */
  async copyUpTo(end: number): Promise<void> {
    for (let from = this.cut + this.copied; from < end; from = this.cut + this.copied) {
      const chunk = await this.source().read(Math.min(COPY_CHUNK, end - from), from);
      if (chunk.length === 0) throw new ArbiterError('INTERNAL', `the audit log ends before byte ${end}`);
      await this.copy.write(chunk, this.copied);
      this.copied += chunk.length;
    }
    for await (const line of scanLines(this.copy, this.copied, COPY_CHUNK, this.indexed)) {
      if (!line.terminated) break;
      const parsed = parseEntryLine(line.text);
      if (parsed.kind === 'entry') {
        this.index.add(parsed.entry, line.offset, line.length);
        this.head = { seq: parsed.entry.seq, hash: parsed.entry.hash, entry_id: parsed.entry.id };
      }
      this.indexed = line.offset + line.length + 1;
    }
  }

  get length(): number {
    return this.copied;
  }

  /** Makes the copy durable and renames it over the log; from then on the copy is the log. */
  async replace(): Promise<LogFile> {
    await this.copy.sync();
    await rename(this.path, this.target);
    return this.copy;
  }

  /** Makes the rename durable. */
  // Stryker disable next-line BlockStatement: only a crash shows a rename that was not made durable
  async syncDirectory(): Promise<void> {
    const dir = await open(dirname(this.target), constants.O_RDONLY);
    // Stryker disable next-line BlockStatement: as above (the close in finally is tested: no descriptor leaks)
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  /** Drops an unfinished copy: its space too, since a full disk is a likely reason it failed. */
  async discard(): Promise<void> {
    await this.copy.close();
    await rm(this.path, { force: true });
  }
}
