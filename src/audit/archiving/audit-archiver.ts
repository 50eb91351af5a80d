import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ArbiterError } from '../../model/index.js';
import { systemEvent } from '../system-event.js';
import type { AuditLog, Checkpoint, RetainedRange, RetentionAnchor } from '../audit-log.js';
import type { ArchiveKeepers, KeptEntry } from './archive-keepers.js';
import {
  type ArchiveFileSummary,
  digestFile,
  renameDurably,
  verifyArchive,
  writeArchive,
} from './archive-file.js';

/** The steps of an archive run, in order; each is safe to repeat after a crash. */
export const ARCHIVE_STEPS = ['written', 'trimmed'] as const;
export type ArchiveStep = (typeof ARCHIVE_STEPS)[number];

export interface ArchiveRequest {
  /** Entries up to the newest checkpoint taken before this time are archived. */
  before: Date;
  /** The archive's path, given the range it holds. */
  path: (range: { from_seq: number; to_seq: number }) => string;
  /** Who asked: recorded in the audit.archived entry. */
  actor: string;
  /** What must outlive the cut (pending decisions, the audited configuration); none by default. */
  keepers?: ArchiveKeepers;
  now?: () => Date;
  /** Told after each step (logs; the crash tests stop the process there). */
  onStep?: (step: ArchiveStep, archive: ArchiveFileSummary) => Promise<void> | void;
}

export interface ArchiveResult {
  /** The archive written (or found complete from an interrupted run); null when nothing was due. */
  archive: ArchiveFileSummary | null;
  retained: RetainedRange;
  message: string;
  /** The entry in use that stopped the cut before the newest checkpoint due, when one did. */
  kept?: KeptEntry;
}

/**
 * Archives the oldest entries: writes them to a file, verifies the file, records the
 * retention anchor (the archived range's last checkpoint), and only then removes them
 * from the log, which records the run in an audit.archived entry. The cut stays before
 * the oldest entry the keepers still use, and what they carry over is recorded before the
 * cut. Killed at any point, nothing is lost, and a rerun with the same `before` finishes the job.
 */
export async function archiveAuditLog(log: AuditLog, request: ArchiveRequest): Promise<ArchiveResult> {
  const now = request.now ?? (() => new Date());
  const retained = await log.retained();
  const due = await dueCheckpoints(log, retained, request.before);
  // Asked after the checkpoints were read: every entry up to them is in the log by now.
  const { boundary, kept } = cutBefore(due, await request.keepers?.oldestInUse());
  const keptNote = kept ? `; entries from seq ${kept.seq} on stay: ${kept.reason}` : '';
  if (!boundary) {
    await finishInterrupted(log, retained, request.actor, now);
    return {
      archive: null,
      retained: await log.retained(),
      message: `nothing to archive: no checkpoint after seq ${retained.from_seq - 1} was taken before ${request.before.toISOString()}${keptNote}`,
      ...(kept ? { kept } : {}),
    };
  }
  const range = { from_seq: retained.from_seq, to_seq: boundary.seq };
  const path = request.path(range);
  const start = retained.anchor && { seq: retained.anchor.seq, hash: retained.anchor.hash };
  const archive = await writeVerified(log, path, start, boundary);
  await request.onStep?.('written', archive);
  await request.keepers?.carryOver(boundary, request.actor);

  const anchor: RetentionAnchor = {
    seq: boundary.seq,
    hash: boundary.hash,
    entry_id: boundary.entry_id,
    checkpoint_time: boundary.time,
    archived_at: now().toISOString(),
    archive: archive.file,
  };
  await log.trim(anchor);
  await request.onStep?.('trimmed', archive);
  await log.append(
    systemEvent('audit.archived', now().toISOString(), request.actor, {
      ...archive,
      before: request.before.toISOString(),
      anchor: { ...anchor },
      ...(kept ? { kept: { ...kept } } : {}),
    }),
  );
  return {
    archive,
    retained: await log.retained(),
    message: `archived seq ${archive.from_seq}..${archive.to_seq} (${archive.entries} entries) to ${archive.file}${keptNote}`,
    ...(kept ? { kept } : {}),
  };
}

/** The newest due checkpoint before the entry in use; `kept` when that entry moved the cut back. */
function cutBefore(
  due: Checkpoint[],
  inUse: KeptEntry | undefined,
): { boundary: Checkpoint | undefined; kept: KeptEntry | undefined } {
  const boundary = due.filter((c) => inUse === undefined || c.seq < inUse.seq).at(-1);
  return { boundary, kept: boundary === due.at(-1) ? undefined : inUse };
}

/** An interrupted run may have recorded its anchor and not finished: finishes it. */
async function finishInterrupted(
  log: AuditLog,
  retained: RetainedRange,
  actor: string,
  now: () => Date,
): Promise<void> {
  if (!retained.anchor) return;
  await log.trim(retained.anchor);
  await recordIfMissing(log, retained.anchor, actor, now);
}

/** A run stopped between the trim and its audit.archived entry: the entry, as far as it is known now. */
async function recordIfMissing(
  log: AuditLog,
  anchor: RetentionAnchor,
  actor: string,
  now: () => Date,
): Promise<void> {
  const [last] = (await log.query({ event_type: 'audit.archived', order: 'desc', limit: 1 })).entries;
  if ((last?.data.anchor as RetentionAnchor | undefined)?.seq === anchor.seq) return;
  await log.append(
    systemEvent('audit.archived', now().toISOString(), actor, {
      file: anchor.archive,
      to_seq: anchor.seq,
      anchor: { ...anchor },
      note: 'recorded by a rerun: the run that archived these entries stopped before recording it',
    }),
  );
}

/** The checkpoints past the retained start taken before `before` that the log still holds, oldest first. */
async function dueCheckpoints(log: AuditLog, retained: RetainedRange, before: Date): Promise<Checkpoint[]> {
  if (Number.isNaN(before.getTime())) throw new ArbiterError('INVALID_REQUEST', 'before is not a valid time');
  const head = await log.head();
  return (await log.checkpoints()).filter(
    (c) => c.seq >= retained.from_seq && c.seq <= head.seq && Date.parse(c.time) < before.getTime(),
  );
}

/**
 * The archive at `path`, verified: written to `path.partial` and renamed into place once
 * it verifies; a complete one left by an interrupted run is verified and kept.
 */
async function writeVerified(
  log: AuditLog,
  path: string,
  start: { seq: number; hash: string } | null,
  boundary: Checkpoint,
): Promise<ArchiveFileSummary> {
  const fromSeq = (start?.seq ?? 0) + 1;
  if (!(await exists(path))) {
    const partial = `${path}.partial`;
    await writeArchive(log, partial, fromSeq, boundary.seq);
    const report = await verifyArchive(partial, start, boundary);
    if (!report.ok) {
      throw new ArbiterError(
        'CONFLICT',
        `the archive written to ${partial} does not verify (seq ${report.break?.seq}: ${report.break?.reason}); nothing was removed from the log`,
      );
    }
    await renameDurably(partial, path);
  } else {
    const report = await verifyArchive(path, start, boundary);
    if (!report.ok) {
      throw new ArbiterError(
        'CONFLICT',
        `${path} exists and is not the archive of seq ${fromSeq}..${boundary.seq} (${report.break?.reason}); it was left as it is`,
      );
    }
  }
  return {
    file: basename(path),
    from_seq: fromSeq,
    to_seq: boundary.seq,
    entries: boundary.seq - fromSeq + 1,
    ...(await digestFile(path)),
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    // Stryker disable next-line ConditionalExpression: any other error of stat (ENOTDIR, EACCES, ELOOP) fails the open of path.partial just after with the same code
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
