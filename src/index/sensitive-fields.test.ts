import { describe, expect, it } from 'vitest';
import { maskSensitive, sensitiveFieldsOf } from './sensitive-fields.js';

const MASK = (v: unknown) => ({ masked: `<${JSON.stringify(v)}>` });
const mask = (schema: unknown, value: unknown) => {
  const fields = sensitiveFieldsOf(schema);
  return fields ? maskSensitive(value, fields, MASK) : value;
};
const secret = { type: 'string', 'x-arbiter-sensitive': true };

describe('sensitive parameters', () => {
  it('are none in a schema that marks none', () => {
    expect(sensitiveFieldsOf(undefined)).toBeUndefined();
    expect(sensitiveFieldsOf({ type: 'object', properties: { a: { type: 'string' } } })).toBeUndefined();
    expect(sensitiveFieldsOf({ properties: { a: { 'x-arbiter-sensitive': 'yes' } } })).toBeUndefined();
  });

  it('are masked where marked, at any depth, and nothing else changes', () => {
    const schema = {
      type: 'object',
      properties: {
        user: { type: 'string' },
        token: secret,
        db: { type: 'object', properties: { password: secret, host: { type: 'string' } } },
        keys: { type: 'array', items: { type: 'object', properties: { value: secret } } },
      },
    };
    const value = {
      user: 'ada',
      token: 'tk-1',
      db: { password: 'pw', host: 'h' },
      keys: [{ value: 'k1', id: 1 }, { id: 2 }],
    };
    const masked = mask(schema, value);
    expect(masked).toEqual({
      user: 'ada',
      token: { masked: '<"tk-1">' },
      db: { password: { masked: '<"pw">' }, host: 'h' },
      keys: [{ value: { masked: '<"k1">' }, id: 1 }, { id: 2 }],
    });
    expect(value.token).toBe('tk-1'); // the input is not changed
    expect((masked as { keys: unknown[] }).keys[1]).toBe(value.keys[1]); // untouched parts are shared
  });

  it('masks a whole object or array marked sensitive, and values of any type', () => {
    const schema = {
      properties: {
        creds: { type: 'object', 'x-arbiter-sensitive': true },
        pin: { 'x-arbiter-sensitive': true },
      },
    };
    expect(mask(schema, { creds: { a: 1 }, pin: 1234 })).toEqual({
      creds: { masked: '<{"a":1}>' },
      pin: { masked: '<1234>' },
    });
  });

  it('follows additionalProperties, patternProperties, combinators and conditionals', () => {
    expect(mask({ additionalProperties: secret }, { a: 'x', b: 'y' })).toEqual({
      a: { masked: '<"x">' },
      b: { masked: '<"y">' },
    });
    // A pattern's mark reaches named members too (the safe side).
    expect(
      mask(
        { properties: { api_key: { type: 'string' } }, patternProperties: { _key$: secret } },
        { api_key: 'k' },
      ),
    ).toEqual({ api_key: { masked: '<"k">' } });
    expect(mask({ allOf: [{ properties: { a: secret } }] }, { a: 'x', b: 'y' })).toEqual({
      a: { masked: '<"x">' },
      b: 'y',
    });
    expect(mask({ if: {}, then: { properties: { b: secret } } }, { b: 'y' })).toEqual({
      b: { masked: '<"y">' },
    });
    expect(mask({ prefixItems: [secret] }, ['x', 'y'])).toEqual([{ masked: '<"x">' }, { masked: '<"y">' }]);
  });

  it('leaves values of another shape than the schema expects as they are, except where marked', () => {
    const schema = { properties: { db: { properties: { password: secret } } } };
    expect(mask(schema, { db: 'not an object' })).toEqual({ db: 'not an object' });
    expect(mask(schema, { db: null })).toEqual({ db: null });
    expect(mask(schema, 'text')).toBe('text');
  });
});
