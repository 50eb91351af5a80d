import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { compileParameterSchema } from './compile-parameter-schema.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// What compiling at once would say: the reference the lazy check must agree with.
function eagerCompiles(schema: Record<string, unknown>): boolean {
  const ajv = addFormats(
    new Ajv({ strict: false, addUsedSchema: false, logger: false, validateFormats: true }),
  );
  try {
    ajv.compile(structuredClone(schema));
    return true;
  } catch {
    return false;
  }
}

const SCHEMAS: Record<string, Record<string, unknown>> = {
  'plain object': { type: 'object', properties: { a: { type: 'string' } } },
  'unknown type': { type: 'object', properties: { a: { type: 'nonsense' } } },
  'minimum not a number': { type: 'integer', minimum: 'x' },
  'required not a list': { type: 'object', required: 'a' },
  'nested invalid in items': { type: 'array', items: { anyOf: [{ type: 'string' }, { enum: 'x' }] } },
  'invalid pattern': { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } },
  'invalid pattern in allOf': { allOf: [{ properties: { a: { pattern: '\\p{Nope}' } } }] },
  'invalid patternProperties key': { type: 'object', patternProperties: { '(': { type: 'string' } } },
  'valid pattern': { type: 'object', properties: { a: { type: 'string', pattern: '^[a-z]+\\d*$' } } },
  'property named pattern': { type: 'object', properties: { pattern: { type: 'string' } } },
  'missing local reference': { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
  'missing remote reference': { $ref: 'https://example.com/other.json' },
  'resolvable reference': {
    $defs: { amount: { type: 'integer', minimum: 0 } },
    type: 'object',
    properties: { a: { $ref: '#/$defs/amount' } },
  },
  'unknown format': { type: 'string', format: 'no-such-format' },
  'unknown keyword': { type: 'object', 'x-ui-hint': 'wide' },
  'known format': { type: 'object', properties: { mail: { type: 'string', format: 'email' } } },
};

describe('compileParameterSchema', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`accepts or rejects as compiling would: ${name}`, () => {
      const result = compileParameterSchema(schema);
      expect(result.ok).toBe(eagerCompiles(schema));
      if (!result.ok) expect(result.error).not.toBe('');
    });
  }

  it('compiles on first use and then validates like an eagerly compiled schema', () => {
    const result = compileParameterSchema({
      type: 'object',
      required: ['amount'],
      properties: {
        amount: { type: 'integer', maximum: 10 },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
      },
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({ amount: 3, code: 'EUR' })).toBeUndefined();
    expect(result.validator({})).toBe('parameters.amount: is required');
    expect(result.validator({ amount: 11 })).toBe('parameters.amount: must be <= 10');
    expect(result.validator({ amount: 1, code: 'euro' })).toContain('parameters.code');
  });

  it('names the offending pattern', () => {
    const result = compileParameterSchema(SCHEMAS['invalid pattern']);
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining('([a-z') });
  });

  it('does not see later edits of the caller`s schema object', () => {
    const schema: Record<string, unknown> = { type: 'object', required: ['a'] };
    const result = compileParameterSchema(schema);
    schema.required = ['b'];
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({ a: 1 })).toBeUndefined();
  });
});
