import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ajvErrorText } from './ajv-error-text.js';
import { SENSITIVE_KEYWORD } from './sensitive-fields.js';

// ajv-formats is CommonJS with ESM-style typings: at run time the default import is the plugin itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Checks action parameters; returns undefined when they pass, else a reason naming the field. */
export interface ParameterValidator {
  (parameters: Record<string, unknown>): string | undefined;
  /** Releases ajv's cache entry once no snapshot will compile against it again. */
  readonly release: () => void;
}

export type SchemaCompileResult = { ok: true; validator: ParameterValidator } | { ok: false; error: string };

// One instance for all capabilities: user schemas are not registered by $id (addUsedSchema)
// so two capabilities may reuse an $id; keywords ajv does not know are ignored (strict).
const ajv = addFormats(
  new Ajv({
    strict: false,
    // Stryker disable next-line BooleanLiteral: a validator reports the first error only, which ajv finds first either way.
    allErrors: false,
    addUsedSchema: false,
    logger: false,
    validateFormats: true,
  }),
);

const ACCEPT_ALL: ParameterValidator = Object.assign(() => undefined, { release: () => undefined });

// Keywords whose values are data, not schemas: a `pattern` key in a default value is no regular expression.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['const', 'enum', 'default', 'examples']);
// Keywords whose values map names to schemas: a property may be called `pattern` or `default`.
const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

// Only references, and identifiers (a $id or $anchor given twice), can fail at compile time
// in ways the meta-schema cannot see. Tested on JSON.stringify's output: no space before the colon.
const REFERENCE = /"\$(ref|dynamicRef|recursiveRef|id|anchor|dynamicAnchor)":/;

/**
 * Checks the schema now and compiles it on first use: a compiled validator is generated
 * code of about 25 KiB, and a configuration may hold ten thousand capabilities of which
 * few are called. Schemas with references compile at once, since only compiling resolves them.
 */
export function compileParameterSchema(schema: Record<string, unknown> | undefined): SchemaCompileResult {
  if (schema === undefined) return { ok: true, validator: ACCEPT_ALL };
  // A private copy: ajv caches by object identity and the spec belongs to the caller.
  const own = structuredClone(schema) as AnySchemaObject;
  const problem = schemaProblem(own);
  if (problem !== undefined) return { ok: false, error: problem };
  let validate: ValidateFunction | undefined;
  if (REFERENCE.test(JSON.stringify(own))) {
    const compiled = compile(own);
    if (typeof compiled === 'string') return { ok: false, error: compiled };
    validate = compiled;
  }
  const validator = (parameters: Record<string, unknown>): string | undefined => {
    if (validate === undefined) {
      const compiled = compile(own);
      // Fail closed: parameters that cannot be checked are not valid. A guard: what can fail to
      // compile (references, identifiers) compiled at once, and schemaProblem caught the rest.
      // Stryker disable next-line StringLiteral: see above; no schema is known to get here.
      if (typeof compiled === 'string') return `parameters: cannot be checked: ${compiled}`;
      validate = compiled;
    }
    if (validate(parameters)) return undefined;
    const first = validate.errors?.[0];
    return first ? ajvErrorText(first, 'parameters') : 'parameters: are invalid';
  };
  return { ok: true, validator: Object.assign(validator, { release: () => void ajv.removeSchema(own) }) };
}

function compile(schema: AnySchemaObject): ValidateFunction | string {
  try {
    return ajv.compile(schema);
  } catch (err) {
    ajv.removeSchema(schema);
    return err instanceof Error ? err.message : String(err);
  }
}

/** What compiling would reject, found without generating code: the meta-schema and regular expressions. */
function schemaProblem(schema: AnySchemaObject): string | undefined {
  try {
    if (!ajv.validateSchema(schema)) return ajv.errorsText(ajv.errors, { dataVar: 'schema' });
  } catch (err) {
    // A $schema naming a meta-schema ajv does not have throws instead of failing.
    return (err as Error).message;
  }
  return firstProblem(schema, invalidPattern) ?? firstProblem(schema, invalidSensitiveMark);
}

/**
 * The first problem `check` finds in the schema or any subschema: data keywords (const,
 * enum, default, examples) are values, not schemas, and are not searched.
 */
function firstProblem(
  schema: unknown,
  check: (schema: Record<string, unknown>) => string | undefined,
): string | undefined {
  if (Array.isArray(schema)) return firstOf(schema, check); // allOf, anyOf, items as a list
  if (!isObject(schema)) return undefined;
  const own = check(schema);
  if (own !== undefined) return own;
  for (const [keyword, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(keyword)) continue;
    // The meta-schema has made sure that a map keyword holds an object.
    const problem = SCHEMA_MAPS.has(keyword)
      ? firstOf(Object.values(value as object), check)
      : firstProblem(value, check);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function firstOf(
  schemas: readonly unknown[],
  check: (schema: Record<string, unknown>) => string | undefined,
): string | undefined {
  for (const schema of schemas) {
    const problem = firstProblem(schema, check);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** A `pattern` or `patternProperties` key that is not a valid regular expression. */
function invalidPattern(schema: Record<string, unknown>): string | undefined {
  const patterns = [
    ...(typeof schema.pattern === 'string' ? [schema.pattern] : []),
    ...(isObject(schema.patternProperties) ? Object.keys(schema.patternProperties) : []),
  ];
  for (const pattern of patterns) {
    try {
      new RegExp(pattern, 'u'); // as ajv compiles them (unicodeRegExp)
    } catch (err) {
      return `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(err as Error).message}`;
    }
  }
  return undefined;
}

/** x-arbiter-sensitive that is not true or false: "true" as a string would mask nothing. */
function invalidSensitiveMark(schema: Record<string, unknown>): string | undefined {
  const mark = schema[SENSITIVE_KEYWORD];
  if (mark === undefined || typeof mark === 'boolean') return undefined;
  return `${SENSITIVE_KEYWORD} must be true or false, not ${JSON.stringify(mark)}`;
}

/** An object or an array; firstProblem takes arrays apart first. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
