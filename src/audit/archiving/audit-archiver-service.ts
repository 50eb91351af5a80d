import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ArbiterError } from '../../model/index.js';
import type { AuditLog } from '../audit-log.js';
import type { ArchiveKeepers } from './archive-keepers.js';
import { type ArchiveRequest, type ArchiveResult, archiveAuditLog } from './audit-archiver.js';

/** An archive's file name: the seq range, zero-padded so that names sort in chain order. */
export function archiveFileName(range: { from_seq: number; to_seq: number }): string {
  const pad = (seq: number): string => String(seq).padStart(12, '0');
  return `audit-${pad(range.from_seq)}-${pad(range.to_seq)}.jsonl`;
}

/** Archive runs of one process into one folder, one at a time (POST /api/v1/audit/archive). */
export class AuditArchiver {
  private running = false;

  constructor(
    private readonly log: AuditLog,
    /** Undefined: archiving through the API is off (no persistent folder was given). */
    readonly dir: string | undefined,
    /** What must outlive a cut (see ArchiveKeepers); none in tests of the log alone. */
    private readonly keepers?: ArchiveKeepers,
  ) {}

  async run(
    before: Date,
    actor: string,
    options: Pick<ArchiveRequest, 'now' | 'onStep'> = {},
  ): Promise<ArchiveResult> {
    const dir = this.dir;
    if (dir === undefined) {
      throw new ArbiterError(
        'CONFLICT',
        'archiving through the API needs --audit-archive-dir (a persistent folder) with --redis; or run arbiter audit archive --redis',
      );
    }
    if (this.running) {
      throw new ArbiterError('CONFLICT', 'an archive run is in progress; try again when it ends');
    }
    this.running = true;
    try {
      await mkdir(dir, { recursive: true });
      return await archiveAuditLog(this.log, {
        ...options,
        ...(this.keepers ? { keepers: this.keepers } : {}),
        before,
        actor,
        path: (range) => join(dir, archiveFileName(range)),
      });
    } finally {
      this.running = false;
    }
  }
}
