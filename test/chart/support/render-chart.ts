import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART_DIR = join(REPO, 'charts/arbiter');
const RENDERER_SOURCE = join(REPO, 'test/chart/render/main.go');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: any;
}

export interface RenderOptions {
  /** Values over the chart's values.yaml, as `helm install -f` would merge them. */
  values?: Record<string, unknown>;
  name?: string;
  namespace?: string;
  /** .Capabilities.KubeVersion, e.g. v1.20.2; default the renderer's (v1.31.0). */
  kubeVersion?: string;
  /** .Capabilities.APIVersions (group/version and group/version/Kind). */
  apiVersions?: string[];
}

export interface RenderedChart {
  objects: KubeObject[];
  notes: string;
  /** The single object of this kind (and name, if given); throws if there is not exactly one. */
  one(kind: string, name?: string): KubeObject;
  all(kind: string): KubeObject[];
}

/** The renderer built by test/chart/setup, if it is current (its stamp is main.go's hash). */
export async function rendererBinary(): Promise<string> {
  const cache =
    process.env.ARBITER_TEST_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'arbiter-test-assets');
  const binary = join(cache, 'bin/chart-render');
  const want = createHash('sha256')
    .update(await readFile(RENDERER_SOURCE))
    .digest('hex');
  const stamp = existsSync(`${binary}.sha256`) ? await readFile(`${binary}.sha256`, 'utf8') : undefined;
  if (!existsSync(binary) || stamp !== want) {
    throw new Error(
      `the chart renderer ${binary} is ${existsSync(binary) ? 'outdated' : 'missing'}: run \`bash test/chart/setup\``,
    );
  }
  return binary;
}

/** Renders charts/arbiter like `helm template`, with the Go renderer of test/chart/render. */
export async function renderChart(options: RenderOptions = {}): Promise<RenderedChart> {
  const binary = await rendererBinary();
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-chart-'));
  try {
    const args = ['--chart', CHART_DIR, '--notes', join(dir, 'NOTES.txt')];
    args.push('--name', options.name ?? 'arbiter', '--namespace', options.namespace ?? 'arbiter-system');
    if (options.kubeVersion) args.push('--kube-version', options.kubeVersion);
    for (const version of options.apiVersions ?? []) args.push('--api-versions', version);
    if (options.values) {
      await writeFile(join(dir, 'values.yaml'), JSON.stringify(options.values));
      args.push('--values', join(dir, 'values.yaml'));
    }
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(binary, args, { maxBuffer: 64 * 1024 * 1024 }, (error, out, err) => {
        if (error) reject(new Error(`chart-render failed: ${err || error.message}`));
        else resolve(out);
      });
    });
    const objects = parseAllDocuments(stdout).map((doc) => {
      if (doc.errors.length > 0)
        throw new Error(`rendered YAML is invalid: ${doc.errors[0]?.message}\n${stdout}`);
      return doc.toJS() as KubeObject | null;
    });
    const rendered = objects.filter((object): object is KubeObject => object !== null);
    const notes = await readFile(join(dir, 'NOTES.txt'), 'utf8');
    const all = (kind: string) => rendered.filter((object) => object.kind === kind);
    return {
      objects: rendered,
      notes,
      all,
      one(kind, name) {
        const found = all(kind).filter((object) => name === undefined || object.metadata.name === name);
        if (found.length !== 1)
          throw new Error(`expected one ${kind} ${name ?? ''}, rendered ${found.length}`);
        return found[0]!;
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The arbiter container of the rendered Deployment. */
export function arbiterContainer(chart: RenderedChart): any {
  const container = chart
    .one('Deployment')
    .spec.template.spec.containers.find((c: { name: string }) => c.name === 'arbiter');
  if (!container) throw new Error('the Deployment has no arbiter container');
  return container;
}

/** The controller's ClusterRole: the one the chart binds (the reviewer roles are for people to bind). */
export function controllerClusterRole(chart: RenderedChart): KubeObject {
  return chart.one('ClusterRole', chart.one('ClusterRoleBinding').roleRef.name);
}

/** The controller's own Role: the one the chart binds (the kubectl Role is for people to bind). */
export function controllerRole(chart: RenderedChart): KubeObject {
  return chart.one('Role', chart.one('RoleBinding').roleRef.name);
}
