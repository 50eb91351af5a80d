import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isCelError, run } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { KINDS, SPEC_SCHEMAS } from '../../src/model/index.js';
import {
  buildCrd,
  renderCrdFiles,
  specSchemaFor,
  supportsCelRules,
  toStructural,
  withoutCelRules,
} from '../../scripts/crd-manifests.js';
import { CRDS_DIR } from '../env/install-crds.js';

/** Every `x-kubernetes-validations` rule in a schema, with its JSON path. */
function celRules(schema: unknown, path = ''): { path: string; rule: string }[] {
  if (schema === null || typeof schema !== 'object') return [];
  return Object.entries(schema).flatMap(([key, value]) =>
    key === 'x-kubernetes-validations'
      ? (value as { rule: string }[]).map(({ rule }) => ({ path, rule }))
      : celRules(value, `${path}/${key}`),
  );
}

describe('crds/', () => {
  it('is what npm run gen:crds generates from src/model/spec-schemas.ts', async () => {
    const committed = (await readdir(CRDS_DIR)).filter((f) => f.endsWith('.yaml')).sort();
    const generated = renderCrdFiles();
    expect(committed).toEqual([...generated.keys()].sort());
    for (const [name, text] of generated) {
      expect(await readFile(join(CRDS_DIR, name), 'utf8'), `${name} drifted: run npm run gen:crds`).toBe(
        text,
      );
    }
  });

  it.each(KINDS)('embeds the %s spec schema, minus additionalProperties and plus CEL rules only', (kind) => {
    const inCrd = buildCrd(kind).spec as {
      versions: { schema: { openAPIV3Schema: { properties: { spec: unknown } } } }[];
    };
    const spec = inCrd.versions[0]!.schema.openAPIV3Schema.properties.spec;
    expect(withoutCelRules(spec)).toEqual(toStructural(SPEC_SCHEMAS[kind]));
    expect(JSON.stringify(spec)).not.toContain('"additionalProperties"');
  });

  it('keeps parameterSchema open (x-kubernetes-preserve-unknown-fields)', () => {
    const capability = specSchemaFor('Capability') as { properties: Record<string, Record<string, unknown>> };
    expect(capability.properties.parameterSchema).toMatchObject({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('bounds every list that a CEL rule iterates (the API server estimates rule cost from maxItems)', () => {
    const grants = (specSchemaFor('ActorGrant') as { properties: Record<string, Record<string, unknown>> })
      .properties.grants!;
    expect(grants['x-kubernetes-validations']).toBeDefined();
    expect(grants.maxItems).toBeLessThanOrEqual(1024);
  });

  it('rejects duplicate capabilities in grants with its CEL rule', () => {
    const [rule] = celRules(specSchemaFor('ActorGrant'));
    expect(rule?.path).toBe('/properties/grants');
    const evaluate = (capabilities: string[]): unknown =>
      run(rule!.rule, { self: capabilities.map((capability) => ({ capability })) });
    expect(evaluate(['a.b', 'a.c'])).toBe(true);
    expect(evaluate([])).toBe(true);
    expect(evaluate(['a.b', 'a.c', 'a.b'])).toBe(false);
  });

  it('has CEL rules that parse', () => {
    const rules = KINDS.flatMap((kind) => celRules(buildCrd(kind)));
    expect(rules.length).toBeGreaterThan(0);
    for (const { rule } of rules) expect(isCelError(run(rule, { self: [] })), rule).toBe(false);
  });

  it('knows which servers enforce CEL rules', () => {
    expect(supportsCelRules({ major: 1, minor: 20 })).toBe(false);
    expect(supportsCelRules({ major: 1, minor: 24 })).toBe(false);
    expect(supportsCelRules({ major: 1, minor: 25 })).toBe(true);
    expect(supportsCelRules({ major: 1, minor: 31 })).toBe(true);
  });
});
