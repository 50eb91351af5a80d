export { validateConfigObject, type ValidationResult } from './validate-config-object.js';
export { buildIndex, compiledArtefactCount, previewIndex, type BuildIndexOptions } from './build-index.js';
export { IndexSnapshot, type RuleTier } from './index-snapshot.js';
export { NO_TENANCY, type TenancySlices } from './tenancy-slices.js';
export { IndexStore, type IndexChangeListener } from './index-store.js';
export type {
  CompiledRule,
  IndexCounts,
  IndexedCapability,
  IndexedDelegation,
  IndexedGrant,
  IndexedPolicy,
  StatusEntry,
} from './indexed-types.js';
export type {
  CompiledCondition,
  CompileResult,
  ConditionBindings,
  ConditionResult,
} from './compile-condition.js';
export { compileCondition } from './compile-condition.js';
export {
  compileParameterSchema,
  type ParameterValidator,
  type SchemaCompileResult,
} from './compile-parameter-schema.js';
export { CONDITION_VARIABLES } from './condition-variables.js';
export { zoneClock, isKnownTimeZone } from './time-zone.js';
export { acceptedObjects, isRejected } from './accepted-objects.js';
export { writeStatus } from './write-status.js';
export { specFingerprint } from './fingerprint.js';
export { capabilityUsers, refuseCapabilityInUse, type CapabilityUsers } from './capability-users.js';
export {
  maskSensitive,
  sensitiveFieldsOf,
  SENSITIVE_KEYWORD,
  type SensitiveFields,
} from './sensitive-fields.js';
export type { IdentityBinding } from './index-identities.js';
export { coversCapability } from './delegation-coverage.js';
