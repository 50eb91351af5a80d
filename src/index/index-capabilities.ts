import type { CapabilityObject } from '../model/index.js';
import type { ArtefactCache } from './artefact-cache.js';
import { compileParameterSchema, type SchemaCompileResult } from './compile-parameter-schema.js';
import type { IndexedCapability } from './indexed-types.js';
import type { ObjectStatuses } from './object-statuses.js';
import { olderFirst } from './older-first.js';
import { sensitiveFieldsOf } from './sensitive-fields.js';

/**
 * Capabilities by spec.name. An invalid parameter schema keeps the object out; of two
 * valid objects claiming one name the older (creationTimestamp, then object name) wins.
 */
export function indexCapabilities(
  objects: readonly CapabilityObject[],
  cache: ArtefactCache,
  statuses: ObjectStatuses,
): Map<string, IndexedCapability> {
  const byName = new Map<string, IndexedCapability>();
  for (const object of [...objects].sort(olderFirst)) {
    const compiled = cache.get<SchemaCompileResult>(
      `Capability/${object.metadata.name}`,
      object.spec,
      () => compileParameterSchema(object.spec.parameterSchema),
      (result) => (result.ok ? result.validator.release() : undefined),
    );
    if (!compiled.ok) {
      statuses.set(
        object,
        'InvalidSchema',
        `spec.parameterSchema is not a valid JSON Schema: ${compiled.error}`,
        'spec.parameterSchema',
      );
      continue;
    }
    const holder = byName.get(object.spec.name);
    if (holder) {
      statuses.set(
        object,
        'Conflict',
        `capability ${object.spec.name} is already defined by the older Capability ${holder.id}`,
        'spec.name',
      );
      continue;
    }
    statuses.set(object, 'Accepted', `capability ${object.spec.name} is registered`);
    byName.set(object.spec.name, {
      id: object.metadata.name,
      name: object.spec.name,
      spec: object.spec,
      createdAt: object.metadata.creationTimestamp,
      validateParameters: compiled.validator,
      sensitive: sensitiveFieldsOf(object.spec.parameterSchema),
    });
  }
  return byName;
}
