import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ajvFieldPointer, ajvMessage } from '../index/ajv-error-text.js';
import { ArbiterError } from '../model/index.js';

// ajv-formats is CommonJS with ESM-style typings: at run time the default import is the plugin itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

function describe(errors: ErrorObject[] | null | undefined): Array<{ field: string; message: string }> {
  return (errors ?? []).map((e) => {
    const field = ajvFieldPointer(e).replace(/^\//, '').replaceAll('/', '.') || '(body)';
    return { field, message: ajvMessage(e) };
  });
}

/** Compiles a schema once; the returned check throws INVALID_REQUEST naming every bad field. */
export function compileValidator<T>(schema: object, what: string): (value: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value: unknown): T => {
    if (validate(value)) return value as T;
    const problems = describe(validate.errors);
    const summary = problems
      .slice(0, 5)
      .map((p) => `${p.field} ${p.message}`)
      .join('; ');
    throw new ArbiterError('INVALID_REQUEST', `invalid ${what}: ${summary}`, { errors: problems });
  };
}
