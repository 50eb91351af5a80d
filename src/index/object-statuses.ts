import { objectKey, type ConfigObject, type ObjectStatus, type ReadyReason } from '../model/index.js';
import type { StatusEntry } from './indexed-types.js';

/** Collects the Ready condition of every object during one build, by objectKey. */
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
    const { name, namespace } = object.metadata;
    this.entries.set(objectKey(object), {
      kind: object.kind,
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      status,
    });
    return status;
  }

  /** Adds the OutsideDelegation message to the object's status (set before). */
  markOutsideDelegation(object: ConfigObject, message: string): void {
    const key = objectKey(object);
    const entry = this.entries.get(key);
    if (entry) this.entries.set(key, { ...entry, status: { ...entry.status, outsideDelegation: message } });
  }
}
