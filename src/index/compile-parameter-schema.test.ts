import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterEach, describe, expect, it, vi } from 'vitest';
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
  'unknown keyword without a value': { type: 'object', 'x-ui-hint': null },
  'an $id given twice': {
    type: 'object',
    properties: { a: { $id: 'https://example.com/a' }, b: { $id: 'https://example.com/a' } },
  },
  'an $anchor given twice': { $defs: { a: { $anchor: 'x' }, b: { $anchor: 'x' } } },
  'a default value with a glob under pattern': {
    type: 'object',
    properties: { filter: { type: 'object', default: { pattern: '*.log' } } },
  },
  'examples, const and enum with a pattern key': {
    type: 'object',
    examples: [{ pattern: '(' }],
    properties: { a: { const: { pattern: '(' } }, b: { enum: [{ pattern: '[' }] } },
  },
  'invalid pattern of a property named default': {
    type: 'object',
    properties: { default: { type: 'string', pattern: '(' } },
  },
  'invalid pattern in a list of items': { type: 'array', items: [{ type: 'string', pattern: '(' }] },
  'invalid pattern in items': { type: 'array', items: { type: 'string', pattern: '(' } },
  'invalid pattern in dependencies': { dependencies: { a: { properties: { b: { pattern: '(' } } } } },
  'known format': { type: 'object', properties: { mail: { type: 'string', format: 'email' } } },
};

// The package's own Ajv class: the shared instance inside compile-parameter-schema is one of it.
const compileSpy = () => vi.spyOn(Ajv.prototype, 'compile');

afterEach(() => {
  vi.restoreAllMocks();
});

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

  it('refuses x-arbiter-sensitive that is not a boolean, at any depth, and takes true and false', () => {
    expect(
      compileParameterSchema({
        type: 'object',
        properties: { db: { properties: { password: { type: 'string', 'x-arbiter-sensitive': 'true' } } } },
      }),
    ).toEqual({ ok: false, error: 'x-arbiter-sensitive must be true or false, not "true"' });
    expect(compileParameterSchema({ items: [{ 'x-arbiter-sensitive': 1 }] })).toMatchObject({ ok: false });
    for (const mark of [true, false])
      expect(compileParameterSchema({ properties: { a: { 'x-arbiter-sensitive': mark } } }).ok).toBe(true);
    // In a default value it is data, not a mark.
    expect(compileParameterSchema({ default: { 'x-arbiter-sensitive': 'yes' } }).ok).toBe(true);
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

  it('rejects a schema naming a meta-schema it does not know, rather than throwing', () => {
    const result = compileParameterSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
    });
    expect(result).toEqual({
      ok: false,
      error: 'no schema with key or ref "https://json-schema.org/draft/2020-12/schema"',
    });
  });

  it('names the schema position the meta-schema rejects', () => {
    const result = compileParameterSchema(SCHEMAS['unknown type']);
    expect(result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^schema\/properties\/a\/type must be equal to one of the allowed values/),
    });
  });

  it('rejects an $id given twice at once, not on every call', () => {
    const result = compileParameterSchema(SCHEMAS['an $id given twice']);
    expect(result).toEqual({
      ok: false,
      error: 'reference "https://example.com/a" resolves to more than one schema',
    });
  });

  it('lets two capabilities use the same $id', () => {
    const schema = (maximum: number) => ({
      $id: 'https://example.com/amount.json',
      type: 'object',
      properties: { amount: { type: 'integer', maximum } },
    });
    const first = compileParameterSchema(schema(10));
    const second = compileParameterSchema(schema(20));
    if (!first.ok || !second.ok) throw new Error('both schemas should compile');
    expect(first.validator({ amount: 15 })).toBe('parameters.amount: must be <= 10');
    expect(second.validator({ amount: 15 })).toBeUndefined();
  });

  it('ignores keywords it does not know when checking parameters', () => {
    const result = compileParameterSchema({
      type: 'object',
      'x-ui-hint': 'wide',
      properties: { a: { type: 'string', 'x-order': 1 } },
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({ a: 'x' })).toBeUndefined();
    expect(result.validator({ a: 1 })).toBe('parameters.a: must be string');
  });

  it('treats a pattern key in default values as data', () => {
    const result = compileParameterSchema(SCHEMAS['a default value with a glob under pattern']);
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({ filter: { pattern: '*.log' } })).toBeUndefined();
  });

  it.each(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])(
    'reads the entries of %s as schemas, even one named default',
    (keyword) => {
      expect(compileParameterSchema({ [keyword]: { default: { pattern: '(' } } })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^pattern "\(" is not a valid regular expression: /),
      });
    },
  );

  it('names the invalid pattern wherever a schema sits', () => {
    for (const name of [
      'invalid pattern in allOf',
      'invalid pattern of a property named default',
      'invalid pattern in a list of items',
      'invalid pattern in items',
      'invalid pattern in dependencies',
    ]) {
      expect(compileParameterSchema(SCHEMAS[name]), name).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^pattern "(\(|\\\\p\{Nope\})" is not a valid regular expression: /),
      });
    }
    // Stricter than compiling, which skips definitions nothing references: the author meant a pattern.
    expect(compileParameterSchema({ $defs: { code: { type: 'string', pattern: '(' } } })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^pattern "\(" is not a valid regular expression: /),
    });
    expect(compileParameterSchema(SCHEMAS['invalid patternProperties key'])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^pattern "\(" is not a valid regular expression: /),
    });
  });

  it('compiles a schema without references once, on first use', () => {
    const compile = compileSpy();
    const result = compileParameterSchema({ type: 'object', properties: { n: { type: 'integer' } } });
    if (!result.ok) throw new Error(result.error);
    expect(compile).not.toHaveBeenCalled();
    expect(result.validator({ n: 1 })).toBeUndefined();
    expect(result.validator({ n: 'x' })).toBe('parameters.n: must be integer');
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('compiles a schema with references at once, and only then', () => {
    const compile = compileSpy();
    const result = compileParameterSchema(SCHEMAS['resolvable reference']);
    if (!result.ok) throw new Error(result.error);
    expect(compile).toHaveBeenCalledTimes(1);
    expect(result.validator({ a: -1 })).toBe('parameters.a: must be >= 0');
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('drops the compiled schema from the shared ajv instance on release', () => {
    const remove = vi.spyOn(Ajv.prototype, 'removeSchema');
    const schema = { type: 'object', required: ['a'] };
    const result = compileParameterSchema(schema);
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({})).toBe('parameters.a: is required');
    expect(remove).not.toHaveBeenCalled();
    result.validator.release();
    expect(remove).toHaveBeenCalledWith(schema);
  });

  it('names fields whose keys hold / or ~, and list positions by index', () => {
    const result = compileParameterSchema({
      type: 'object',
      properties: {
        'a/b': { type: 'string' },
        'c~d': { type: 'string' },
        v2: { type: 'string' },
        '2v': { type: 'string' },
        list: { type: 'array', items: { type: 'integer' } },
      },
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.validator({ 'a/b': 1 })).toBe('parameters.a/b: must be string');
    expect(result.validator({ 'c~d': 1 })).toBe('parameters.c~d: must be string');
    expect(result.validator({ v2: 1 })).toBe('parameters.v2: must be string');
    expect(result.validator({ '2v': 1 })).toBe('parameters.2v: must be string');
    const list = [...Array.from({ length: 12 }, (_, i) => i), 'twelve'];
    expect(result.validator({ list })).toBe('parameters.list[12]: must be integer');
  });
});
