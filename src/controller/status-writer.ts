import type { Logger } from 'pino';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError, type Kind } from '../model/index.js';
import type { CustomObjects } from './custom-objects.js';
import { desiredStatus, verdictOf, type ObjectStatusBody } from './desired-status.js';
import type { EventRecorder } from './event-recorder.js';
import { statusWarnings } from './status-warnings.js';
import { rawKey, type RawObject } from './resources.js';
import type { SchemaProblem } from './validated-objects.js';

export interface StatusWriterDeps {
  objects: CustomObjects;
  events: EventRecorder;
  logger: Logger;
  clock: () => Date;
}

export interface StatusPass {
  written: number;
  failed: number;
}

/**
 * Brings every object's status in line with the index (leader only). Writes only what
 * changed, and records the Warning events statusWarnings calls for (rejected, outside
 * the namespace's Delegation).
 */
export class StatusWriter {
  constructor(private readonly deps: StatusWriterDeps) {}

  async sync(
    rawByKind: ReadonlyMap<Kind, readonly RawObject[]>,
    snapshot: IndexSnapshot,
    problems: ReadonlyMap<string, SchemaProblem>,
  ): Promise<StatusPass> {
    const pass: StatusPass = { written: 0, failed: 0 };
    for (const [kind, raws] of rawByKind) {
      for (const raw of raws) {
        const verdict = verdictOf(kind, raw, snapshot, problems.get(rawKey(kind, raw)));
        if (!verdict) continue;
        const desired = desiredStatus(kind, raw, verdict, this.deps.clock());
        if (!desired) continue;
        const ok = await this.write(kind, raw, desired);
        if (ok) pass.written += 1;
        else pass.failed += 1;
      }
    }
    return pass;
  }

  private async write(kind: Kind, raw: RawObject, desired: ObjectStatusBody): Promise<boolean> {
    const name = raw.metadata?.name ?? '';
    const namespace = raw.metadata?.namespace;
    try {
      await this.deps.objects.patchStatus(kind, name, desired, raw.metadata?.resourceVersion, namespace);
    } catch (err) {
      const code = err instanceof ArbiterError ? err.code : undefined;
      // Deleted meanwhile: nothing to report on.
      if (code === 'NOT_FOUND') return true;
      // Changed meanwhile (another writer's condition, a new generation): the next pass,
      // from the newer copy, writes it.
      if (code === 'CONFLICT') {
        this.deps.logger.debug({ kind, namespace, name }, 'status changed meanwhile; writing it again');
        return false;
      }
      this.deps.logger.warn({ err, kind, namespace, name }, 'could not write status');
      return false;
    }
    for (const warning of statusWarnings(raw, desired))
      await this.deps.events.warning(kind, raw, warning.reason, warning.message);
    this.deps.logger.debug({ kind, namespace, name, reason: desired.conditions[0].reason }, 'status written');
    return true;
  }
}
