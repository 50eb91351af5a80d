import type { Logger } from 'pino';
import type { ConfigAuditor } from '../governance/config-auditor.js';
import { acceptedObjects, type IndexSnapshot } from '../index/index.js';
import type { Kind } from '../model/index.js';
import { Backoff } from './backoff.js';
import { CoalescedTask } from './coalesced-task.js';
import type { RawObject } from './resources.js';
import type { StatusWriter } from './status-writer.js';
import type { SchemaProblem } from './validated-objects.js';

/** What the last index rebuild saw and produced. */
export interface PublishedState {
  rawByKind: ReadonlyMap<Kind, readonly RawObject[]>;
  snapshot: IndexSnapshot;
  problems: ReadonlyMap<string, SchemaProblem>;
}

export interface LeaderDutiesDeps {
  auditor: ConfigAuditor;
  statusWriter: StatusWriter;
  isLeader: () => boolean;
  published: () => PublishedState | undefined;
  /** The API caller who deleted `Kind/name`, when the deletion was marked (DeletionNotes). */
  deletedBy?: (key: string) => string | undefined;
  logger: Logger;
}

/** Audit events of kubectl/GitOps changes carry this when the object names no API caller. */
export const KUBERNETES_CALLER = 'kubernetes';

/**
 * What only the leader does after each index change: record configuration audit events
 * and write statuses. On becoming leader it first restores the auditor from the shared
 * audit log, so what the previous leader recorded is not recorded again.
 */
export class LeaderDuties {
  private restored = false;
  private readonly task: CoalescedTask;
  private readonly backoff = new Backoff();

  constructor(private readonly deps: LeaderDutiesDeps) {
    this.task = new CoalescedTask(
      () => this.run(),
      10,
      (err) => {
        const delayMs = this.backoff.nextDelayMs();
        this.deps.logger.warn({ err, retry_in_ms: delayMs }, 'leader duties failed; retrying');
        setTimeout(() => this.changed(), delayMs).unref();
      },
    );
  }

  startedLeading(): void {
    this.restored = false;
    this.task.schedule();
  }

  stoppedLeading(): void {
    this.restored = false;
  }

  /** The index changed (or a retry is due). */
  changed(): void {
    if (this.deps.isLeader()) this.task.schedule();
  }

  close(): Promise<void> {
    return this.task.close();
  }

  private async run(): Promise<void> {
    const state = this.deps.published();
    if (!this.deps.isLeader() || !state) return;
    if (!this.restored) {
      await this.deps.auditor.restore();
      this.restored = true;
    }
    // Leadership may have moved while restoring: the new leader records, not us.
    if (!this.deps.isLeader()) return;
    const recorded = await this.deps.auditor.record(
      acceptedObjects(state.snapshot),
      KUBERNETES_CALLER,
      this.deps.deletedBy,
    );
    if (recorded > 0) this.deps.logger.info({ audited_changes: recorded }, 'configuration changes audited');
    const pass = await this.deps.statusWriter.sync(state.rawByKind, state.snapshot, state.problems);
    if (pass.failed > 0) throw new Error(`${pass.failed} status write(s) failed`);
    this.backoff.reset();
  }
}
