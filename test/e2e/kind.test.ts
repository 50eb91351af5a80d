import { execFile } from 'node:child_process';
import { access, constants, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { REPO } from '../support/arbiter-process.js';
import { mergeValues } from '../chart/support/value-sets.js';

/** kind.sh needs Docker, which CI machines lack: check what can be checked without running it. */
const SCRIPT = join(REPO, 'test/e2e/kind.sh');

describe('test/e2e/kind.sh', () => {
  it('is valid bash and executable', async () => {
    await access(SCRIPT, constants.X_OK);
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile('bash', ['-n', SCRIPT], (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }));
    });
    expect(result).toEqual({ code: 0, stderr: '' });
  });

  it('installs the chart with values its schema accepts', async () => {
    const script = await readFile(SCRIPT, 'utf8');
    const sets = [...script.matchAll(/--set ([\w.]+)=("?)([^"\s\\]*)\2/g)].map(
      (m) => [m[1]!, m[3]!] as const,
    );
    expect(sets.map(([key]) => key)).toEqual(
      expect.arrayContaining(['image.tag', 'redis.existingSecret', 'apiKeys.existingSecret']),
    );
    let values: Record<string, unknown> = {};
    for (const [key, raw] of sets) {
      const value = raw.startsWith('$') ? 'placeholder' : raw;
      const path = key.split('.');
      const nested = path.reduceRight<unknown>((inner, part) => ({ [part]: inner }), value);
      values = mergeValues(values, nested as Record<string, unknown>);
    }
    const chart = join(REPO, 'charts/arbiter');
    const defaults = parse(await readFile(join(chart, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(
      JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8')) as object,
    );
    expect(validate(mergeValues(defaults, values)), JSON.stringify(validate.errors)).toBe(true);
  });

  it('waits for objects the example manifests declare', async () => {
    const script = await readFile(SCRIPT, 'utf8');
    const names = new Set<string>();
    const dir = join(REPO, 'examples/manifests');
    for (const file of await readdir(dir)) {
      for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
        const object = doc.toJS() as { kind: string; metadata: { name: string } };
        names.add(`${object.kind.toLowerCase()}/${object.metadata.name}`);
      }
    }
    const capabilities = /for capability in ([^;]+);/.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
    expect(capabilities.length).toBeGreaterThan(0);
    for (const name of capabilities) expect(names, name).toContain(`capability/${name}`);
    for (const [, name] of script.matchAll(/condition=Ready (actorgrant\/[\w-]+)/g))
      expect(names).toContain(name);
  });
});
