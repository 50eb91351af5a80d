import type { ConfigObject, ObjectStatus, ReadyReason } from '../model/index.js';
import type { StatusEntry } from './indexed-types.js';

/** Collects the Ready condition of every object during one build. */
export class ObjectStatuses {
  readonly entries = new Map<string, StatusEntry>();

  set(object: ConfigObject, reason: ReadyReason, message: string, field?: string): ObjectStatus {
    const status: ObjectStatus = {
      ready: reason === 'Accepted',
      reason,
      message,
      ...(object.metadata.generation !== undefined ? { observedGeneration: object.metadata.generation } : {}),
      ...(field !== undefined ? { field } : {}),
    };
    this.entries.set(`${object.kind}/${object.metadata.name}`, {
      kind: object.kind,
      name: object.metadata.name,
      status,
    });
    return status;
  }
}
