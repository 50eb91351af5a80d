import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { withoutCelRules } from '../../../scripts/crd-manifests.js';
import { CHART_DIR, REPO } from './render-chart.js';

/** Chart folders: CRDs as generated (Kubernetes >= 1.25), and without CEL rules (older). */
export const CHART_CRD_DIRS = { current: 'files/crds', preCel: 'files/crds-pre-1.25' } as const;
export const UPDATE_COMMAND = 'ARBITER_UPDATE_CHART_CRDS=1 npx vitest run test/chart/crds.test.ts';

/** What the chart's CRD folders must hold, by path relative to the chart: derived from crds/. */
export async function expectedChartCrdFiles(): Promise<Map<string, string>> {
  const crdsDir = join(REPO, 'crds');
  const files = (await readdir(crdsDir)).filter((file) => file.endsWith('.yaml')).sort();
  const expected = new Map<string, string>();
  for (const file of files) {
    const text = await readFile(join(crdsDir, file), 'utf8');
    expected.set(`${CHART_CRD_DIRS.current}/${file}`, text);
    const header =
      `# crds/${file} without its CEL rules (x-kubernetes-validations), for Kubernetes < 1.25.\n` +
      `# Do not edit: regenerate with \`${UPDATE_COMMAND}\`.\n`;
    expected.set(`${CHART_CRD_DIRS.preCel}/${file}`, header + stringify(withoutCelRules(parse(text))));
  }
  return expected;
}

/** What the chart's CRD folders hold now. */
export async function actualChartCrdFiles(): Promise<Map<string, string>> {
  const actual = new Map<string, string>();
  for (const dir of Object.values(CHART_CRD_DIRS)) {
    let files: string[] = [];
    try {
      files = await readdir(join(CHART_DIR, dir));
    } catch {
      continue;
    }
    for (const file of files.sort())
      actual.set(`${dir}/${file}`, await readFile(join(CHART_DIR, dir, file), 'utf8'));
  }
  return actual;
}
