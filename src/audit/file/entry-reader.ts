import { ArbiterError } from '../../model/index.js';
import type { AuditEntry } from '../audit-log.js';
import { parseEntryLine } from '../entry-shape.js';
import type { EntryIndex } from './entry-index.js';
import type { LogFile } from './log-file.js';

const MAX_SPAN_BYTES = 4 << 20;

interface Span {
  offset: number;
  end: number;
  positions: number[];
}

/** Groups sorted positions whose lines are adjacent in the file into bounded reads. */
function spansOf(index: EntryIndex, sorted: number[]): Span[] {
  const spans: Span[] = [];
  for (const p of sorted) {
    const { offset, length } = index.location(p);
    const last = spans.at(-1);
    if (last && last.end + 1 === offset && offset + length - last.offset <= MAX_SPAN_BYTES) {
      last.end = offset + length;
      last.positions.push(p);
    } else {
      spans.push({ offset, end: offset + length, positions: [p] });
    }
  }
  return spans;
}

/**
 * Reads the entries at these positions from the file, returned in the order asked.
 * Adjacent lines are read together. A line that no longer parses, or holds another seq,
 * means the file changed under the log: an ArbiterError (INTERNAL).
 */
export async function readEntries(
  file: LogFile,
  index: EntryIndex,
  positions: readonly number[],
): Promise<AuditEntry[]> {
  const sorted = [...new Set(positions)].sort((a, b) => a - b);
  const byPosition = new Map<number, AuditEntry>();
  for (const span of spansOf(index, sorted)) {
    const buffer = await file.read(span.end - span.offset, span.offset);
    for (const p of span.positions) {
      const { seq, offset, length } = index.location(p);
      const start = offset - span.offset;
      const parsed =
        start + length <= buffer.length
          ? parseEntryLine(buffer.toString('utf8', start, start + length))
          : { kind: 'invalid' as const, reason: 'the file is shorter than expected' };
      if (parsed.kind === 'invalid' || parsed.entry.seq !== seq) {
        const reason = parsed.kind === 'invalid' ? parsed.reason : `it now holds seq ${parsed.entry.seq}`;
        throw new ArbiterError('INTERNAL', `audit entry seq ${seq} is unreadable: ${reason}`, { seq });
      }
      byPosition.set(p, parsed.entry);
    }
  }
  return positions.map((p) => byPosition.get(p)!);
}
