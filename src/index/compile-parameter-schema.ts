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

export function compileParameterSchema(schema: Record<string, unknown> | undefined): SchemaCompileResult {
  if (schema === undefined) return { ok: true, validator: ACCEPT_ALL };
  // A private copy: ajv caches by object identity and the spec belongs to the caller.
  const own = structuredClone(schema) as AnySchemaObject;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(own);
  } catch (err) {
    ajv.removeSchema(own);
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  const validator = (parameters: Record<string, unknown>): string | undefined => {
    if (validate(parameters)) return undefined;
    const first = validate.errors?.[0];
    return first ? ajvErrorText(first, 'parameters') : 'parameters: are invalid';
  };
  return { ok: true, validator: Object.assign(validator, { release: () => void ajv.removeSchema(own) }) };
}
