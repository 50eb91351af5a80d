import type { ErrorObject } from 'ajv';

/**
 * One ajv error as a sentence that names the field, e.g.
 * `spec.rules[0].outcome: must be one of DENY, ESCALATE` or `parameters.amount: is required`.
 */
export function ajvErrorText(error: ErrorObject, root: string): string {
  return `${root}${jsonPointerToPath(ajvFieldPointer(error))}: ${ajvMessage(error)}`;
}

/** The JSON pointer of the field an error is about: a missing or unknown property included. */
export function ajvFieldPointer(error: ErrorObject): string {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const property =
    error.keyword === 'required'
      ? params.missingProperty
      : error.keyword === 'additionalProperties'
        ? params.additionalProperty
        : undefined;
  return property === undefined ? error.instancePath : `${error.instancePath}/${property}`;
}

/** What is wrong with that field, in words: `is required`, `must be one of a, b`, `must be v1`... */
export function ajvMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    default:
      return error.message ?? 'is invalid';
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
