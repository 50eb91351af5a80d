import { describe, expect, it } from 'vitest';
import { typeName } from './condition-type.js';
import { parameterType } from './parameter-type.js';

/** The type of one property `p` of the parameters. */
function property(schema: unknown): string {
  const parameters = parameterType({
    type: 'object',
    properties: { p: schema },
    additionalProperties: false,
  });
  return typeName(parameters).replace(/^object\{p: (.*)\}$/, '$1');
}

describe('parameterType', () => {
  it.each([
    [{ type: 'string', format: 'date-time' }, 'string'],
    [{ type: 'integer' }, 'int'],
    [{ type: 'number' }, 'int or double'],
    [{ type: 'boolean' }, 'bool'],
    [{ type: 'null' }, 'null_type'],
    [{ type: ['string', 'null'] }, 'string or null_type'],
    [{ type: ['string', 'whatever'] }, 'dyn'],
    [{ type: 'array', items: { type: 'integer' } }, 'list(int)'],
    [{ type: 'array', items: [{ type: 'integer' }] }, 'list(dyn)'],
    [{ type: 'array' }, 'list(dyn)'],
    [{ type: 'object' }, 'map(string, dyn)'],
    [{ type: 'object', additionalProperties: { type: 'boolean' } }, 'map(string, bool)'],
    [{ type: 'object', additionalProperties: false }, 'object{}'],
    [{ type: 'object', properties: { a: { type: 'string' } } }, 'object{a: string, ...: dyn}'],
    [
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      'object{a: string}',
    ],
    [
      { type: 'object', properties: { a: {} }, additionalProperties: { type: 'integer' } },
      'object{a: dyn, ...: int}',
    ],
    [
      { type: 'object', properties: { a: {} }, patternProperties: { '^x': {} }, additionalProperties: false },
      'object{a: dyn, ...: dyn}',
    ],
    // Keywords that do not say the type leave it open.
    [{ properties: { a: { type: 'string' } } }, 'dyn'],
    [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, 'dyn'],
    [{ $ref: '#/$defs/x' }, 'dyn'],
    [{ enum: ['a', 'b'] }, 'dyn'],
    [true, 'dyn'],
  ])('types the property %j as %s', (schema, type) => {
    expect(property(schema)).toBe(type);
  });

  it('types parameters as a map of dyn without a schema or with one that says nothing', () => {
    expect(typeName(parameterType(undefined))).toBe('map(string, dyn)');
    expect(typeName(parameterType({}))).toBe('map(string, dyn)');
    expect(typeName(parameterType({ description: 'anything' }))).toBe('map(string, dyn)');
  });

  it('stops at a depth where a hostile schema could overflow the stack', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10_000; i++) schema = { type: 'object', properties: { a: schema } };
    expect(typeName(parameterType(schema))).toMatch(/^object\{a: object\{a: .*\.\.\.: dyn\}$/);
    expect(typeName(parameterType(schema))).toContain('a: dyn');
  });
});
