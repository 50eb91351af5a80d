import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { withoutCelRules } from '../../scripts/crd-manifests.js';
import { KINDS } from '../../src/model/index.js';
import {
  actualChartCrdFiles,
  CHART_CRD_DIRS,
  expectedChartCrdFiles,
  UPDATE_COMMAND,
} from './support/chart-crds.js';
import { CHART_DIR, renderChart, type KubeObject } from './support/render-chart.js';

/** The CRD as the chart renders it, minus what the chart adds (labels, keep annotation). */
function asGenerated(crd: KubeObject, source: KubeObject): KubeObject {
  return { ...crd, metadata: { ...crd.metadata, labels: source.metadata.labels, annotations: undefined } };
}

describe('the chart CRDs', () => {
  it('are the repository crds/ (verbatim, and without CEL rules for old servers)', async () => {
    const expected = await expectedChartCrdFiles();
    if (process.env.ARBITER_UPDATE_CHART_CRDS === '1') {
      for (const dir of Object.values(CHART_CRD_DIRS))
        await rm(join(CHART_DIR, dir), { recursive: true, force: true });
      for (const [path, text] of expected) {
        await mkdir(dirname(join(CHART_DIR, path)), { recursive: true });
        await writeFile(join(CHART_DIR, path), text);
      }
    }
    const actual = await actualChartCrdFiles();
    expect(expected.size).toBeGreaterThan(0);
    expect([...actual.keys()].sort(), `chart CRD files differ from crds/; run \`${UPDATE_COMMAND}\``).toEqual(
      [...expected.keys()].sort(),
    );
    for (const [path, text] of expected) {
      expect(actual.get(path), `charts/arbiter/${path} is stale; run \`${UPDATE_COMMAND}\``).toBe(text);
    }
  });

  it('render with CEL rules from Kubernetes 1.25, without before, labelled and kept on uninstall', async () => {
    const expected = await expectedChartCrdFiles();
    const sources = [...expected]
      .filter(([path]) => path.startsWith(`${CHART_CRD_DIRS.current}/`))
      .map(([, text]) => parse(text) as KubeObject);
    for (const [kubeVersion, transform] of [
      ['v1.25.0', (crd: KubeObject) => crd],
      ['v1.31.2', (crd: KubeObject) => crd],
      ['v1.24.9', withoutCelRules],
      ['v1.20.2', withoutCelRules],
    ] as const) {
      const chart = await renderChart({ kubeVersion });
      const crds = chart.all('CustomResourceDefinition');
      expect(crds.map((crd) => crd.metadata.name).sort()).toEqual(sources.map((s) => s.metadata.name).sort());
      for (const source of sources) {
        const crd = chart.one('CustomResourceDefinition', source.metadata.name);
        expect(asGenerated(crd, source), kubeVersion).toEqual(transform(source));
        expect(crd.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
        expect(crd.metadata.labels).toMatchObject({
          ...source.metadata.labels,
          'app.kubernetes.io/instance': 'arbiter',
        });
      }
      expect(JSON.stringify(crds).includes('x-kubernetes-validations'), kubeVersion).toBe(
        transform === withoutCelRules ? false : true,
      );
    }
  });

  it('are left out with crds.install=false and not kept with crds.keep=false', async () => {
    expect(
      (await renderChart({ values: { crds: { install: false } } })).all('CustomResourceDefinition'),
    ).toEqual([]);
    const crds = (await renderChart({ values: { crds: { keep: false } } })).all('CustomResourceDefinition');
    expect(crds.length).toBe(KINDS.length);
    for (const crd of crds) expect(crd.metadata.annotations).toBeUndefined();
  });
});
