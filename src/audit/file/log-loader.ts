import type { ChainHead, Checkpoint } from '../audit-log.js';
import { parseEntryLine } from '../entry-shape.js';
import { LineChainVerifier, type LineVerifyReport } from '../export-verify.js';
import type { AuditLogger } from '../audit-logger.js';
import type { HeadSnapshot } from './checkpointer.js';
import { EntryIndex } from './entry-index.js';
import type { LogFile } from './log-file.js';
import { scanLines, type ScannedLine } from './log-scan.js';

export interface LoadedLog {
  index: EntryIndex;
  /** Bytes of the file after a torn tail was cut off: where the next write goes. */
  length: number;
  /** The last entry in the file, which new entries link to (even after a break). */
  head: HeadSnapshot | undefined;
  report: LineVerifyReport;
}

/**
 * Reads the whole file once: indexes every entry and verifies the chain against the
 * checkpoints. A torn tail (a last line without newline, or a last line that is not
 * JSON: a crash mid-write) is cut off with a warning; it was never acknowledged.
 * Anything broken before the last line is left as it is, for verify() to report.
 */
export async function loadLog(
  file: LogFile,
  checkpoints: readonly Checkpoint[],
  logger: AuditLogger,
  /** The retention anchor the file continues from, once entries were archived. */
  start?: ChainHead,
): Promise<LoadedLog> {
  const index = new EntryIndex();
  const verifier = new LineChainVerifier({ checkpoints, start });
  let head: HeadSnapshot | undefined;
  let held: { line: ScannedLine; lineNumber: number } | undefined;
  let torn: ScannedLine | undefined;
  let lineNumber = 0;
  for await (const line of scanLines(file)) {
    lineNumber += 1;
    // An unparsable line followed by another one is corruption, not a torn write.
    if (held) verifier.pushLine(held.line.text, held.lineNumber);
    held = undefined;
    if (!line.terminated) {
      torn = line;
      break;
    }
    if (line.text.trim() === '') continue;
    const parsed = parseEntryLine(line.text);
    if (parsed.kind === 'invalid') {
      held = { line, lineNumber };
      continue;
    }
    verifier.pushParsed(parsed, lineNumber, line.text);
    index.add(parsed.entry, line.offset, line.length);
    head = { seq: parsed.entry.seq, hash: parsed.entry.hash, entry_id: parsed.entry.id };
  }
  const cut = held?.line ?? torn;
  const size = await file.size();
  if (cut) {
    logger.warn(
      { offset: cut.offset, bytes: size - cut.offset, line: held?.lineNumber ?? lineNumber },
      'audit log ends with a torn line (interrupted write); truncating it',
    );
    await file.truncate(cut.offset);
    await file.sync();
  }
  return { index, length: cut ? cut.offset : size, head, report: verifier.finish() };
}
