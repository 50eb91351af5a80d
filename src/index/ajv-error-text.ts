import type { ErrorObject } from 'ajv';

/**
 * One ajv error as a sentence that names the field, e.g.
 * `spec.rules[0].outcome: must be one of DENY, ESCALATE` or `parameters.amount: is required`.
 */
export function ajvErrorText(error: ErrorObject, root: string): string {
  const path = root + jsonPointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path}.${String(params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${path}.${String(params.additionalProperty)}: is not an allowed field`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${path}: ${error.message ?? 'is invalid'}`;
  }
}

/** `/rules/0/outcome` -> `.rules[0].outcome`. */
export function jsonPointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('');
}
