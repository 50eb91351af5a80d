import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ajvErrorText } from './ajv-error-text.js';

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
  new Ajv({ strict: false, allErrors: false, addUsedSchema: false, logger: false, validateFormats: true }),
);

const ACCEPT_ALL: ParameterValidator = Object.assign(() => undefined, { release: () => undefined });

// Only references can fail to resolve at compile time in ways the meta-schema cannot see.
const REFERENCE = /"\$(ref|dynamicRef|recursiveRef)"\s*:/;

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
      // Fail closed: parameters that cannot be checked are not valid.
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
  if (!ajv.validateSchema(schema)) return ajv.errorsText(ajv.errors, { dataVar: 'schema' });
  return patternProblem(schema);
}

function patternProblem(node: unknown): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
  if (!Array.isArray(node)) {
    const record = node as Record<string, unknown>;
    const patterns = [
      ...(typeof record.pattern === 'string' ? [record.pattern] : []),
      ...(isPlainObject(record.patternProperties) ? Object.keys(record.patternProperties) : []),
    ];
    for (const pattern of patterns) {
      try {
        new RegExp(pattern, 'u'); // as ajv compiles them (unicodeRegExp)
      } catch (err) {
        return `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(err as Error).message}`;
      }
    }
  }
  for (const child of children) {
    const problem = patternProblem(child);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
