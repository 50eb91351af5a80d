import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, run } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { KINDS, SPEC_SCHEMAS } from '../../src/model/index.js';
import {
  buildCrd,
  renderCrdFiles,
  specSchemaFor,
  supportsCelRules,
  toStructural,
  KUBERNETES_ONLY_KEYS,
  withoutKeys,
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

  it.each(KINDS)(
    'embeds the %s spec schema, minus additionalProperties, plus Kubernetes-only keys',
    (kind) => {
      const inCrd = buildCrd(kind).spec as {
        versions: { schema: { openAPIV3Schema: { properties: { spec: unknown } } } }[];
      };
      const spec = inCrd.versions[0]!.schema.openAPIV3Schema.properties.spec;
      expect(withoutKeys(spec, KUBERNETES_ONLY_KEYS)).toEqual(toStructural(SPEC_SCHEMAS[kind]));
      expect(JSON.stringify(spec)).not.toContain('"additionalProperties"');
    },
  );

  it('keeps parameterSchema open (x-kubernetes-preserve-unknown-fields)', () => {
    const capability = specSchemaFor('Capability') as { properties: Record<string, Record<string, unknown>> };
    expect(capability.properties.parameterSchema).toMatchObject({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('keys grants by capability, so the API server refuses duplicates without a costly CEL rule', () => {
    const grants = (specSchemaFor('ActorGrant') as { properties: Record<string, Record<string, unknown>> })
      .properties.grants!;
    expect(grants).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['capability'],
      items: { required: ['capability'] },
    });
  });

  it.each([
    ['Capability', { name: 'a.b' }, { name: 'a.c' }],
    ['ActorGrant', { actor: { id: 'x' } }, { actor: { id: 'y' } }],
  ] as const)('makes the identity of a %s immutable with a CEL transition rule', (kind, before, after) => {
    const rules = celRules(specSchemaFor(kind)).filter((r) => r.path === '');
    expect(rules).toHaveLength(1);
    const rule = rules[0]!.rule;
    expect(run(rule, { self: before, oldSelf: before })).toBe(true);
    expect(run(rule, { self: after, oldSelf: before })).toBe(false);
  });

  it('checks the shape of an ActorGrant subject with a CEL rule (namespace: ServiceAccounts only)', () => {
    const rules = celRules(specSchemaFor('ActorGrant')).filter((r) => r.path !== '');
    expect(rules.map((r) => r.path)).toEqual(['/properties/actor/properties/subjects/items']);
    // The API server escapes the CEL keyword `namespace` as __namespace__ in field names.
    const holds = (self: Record<string, string>) => run(rules[0]!.rule, { self });
    expect(holds({ kind: 'ServiceAccount', __namespace__: 'agents', name: 'a' })).toBe(true);
    expect(holds({ kind: 'ServiceAccount', name: 'a' })).toBe(false);
    expect(holds({ kind: 'User', name: 'alice' })).toBe(true);
    expect(holds({ kind: 'User', __namespace__: 'x', name: 'alice' })).toBe(false);
  });

  it('has CEL rules that parse', () => {
    const rules = KINDS.flatMap((kind) => celRules(buildCrd(kind)));
    expect(rules.length).toBeGreaterThan(0);
    for (const { rule } of rules) expect(() => parse(rule), rule).not.toThrow();
  });

  it('knows which servers enforce CEL rules', () => {
    expect(supportsCelRules({ major: 1, minor: 20 })).toBe(false);
    expect(supportsCelRules({ major: 1, minor: 24 })).toBe(false);
    expect(supportsCelRules({ major: 1, minor: 25 })).toBe(true);
    expect(supportsCelRules({ major: 1, minor: 31 })).toBe(true);
  });
});
