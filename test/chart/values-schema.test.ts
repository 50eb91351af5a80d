import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SCOPES } from '../../src/auth/scopes.js';
import { CHART_DIR } from './support/render-chart.js';
import { mergeValues, REJECTED_VALUE_SETS, VALUE_SETS } from './support/value-sets.js';

const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
  definitions: { apiKey: { properties: { scopes: { items: { enum: string[] } } } } };
};
const defaults = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
// helm validates the merged values against values.schema.json (JSON Schema draft 7).
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

describe('values.schema.json', () => {
  it('accepts values.yaml', () => {
    expect(validate(defaults), JSON.stringify(validate.errors)).toBe(true);
  });

  for (const [name, values] of Object.entries(VALUE_SETS)) {
    it(`accepts the value set: ${name}`, () => {
      expect(validate(mergeValues(defaults, values)), JSON.stringify(validate.errors)).toBe(true);
    });
  }

  for (const { name, values, path } of REJECTED_VALUE_SETS) {
    it(`rejects ${name}`, () => {
      expect(validate(mergeValues(defaults, values))).toBe(false);
      expect(validate.errors?.map((error) => error.instancePath)).toContain(path);
    });
  }

  it('knows exactly the scopes the API knows', () => {
    expect(schema.definitions.apiKey.properties.scopes.items.enum).toEqual([...SCOPES]);
  });
});
