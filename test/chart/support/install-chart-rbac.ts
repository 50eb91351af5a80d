import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '../../env/control-plane-clients.js';
import type { ControlPlane } from '../../env/kube-apiserver.js';
import { renderChart, type RenderedChart } from './render-chart.js';
import { OBJECT_PATHS } from './rbac-objects.js';

/**
 * Creates the chart's ServiceAccount and RBAC (release `arbiter` in `namespace`, which must
 * exist) and writes a kubeconfig acting as that ServiceAccount: Arbiter then runs with
 * exactly the permissions the chart gives it.
 */
export async function installChartRbac(
  cp: ControlPlane,
  namespace: string,
): Promise<{ chart: RenderedChart; kubeconfig: string }> {
  const chart = await renderChart({ name: 'arbiter', namespace });
  for (const object of chart.objects.filter((o) => OBJECT_PATHS[o.kind]))
    await create(cp, OBJECT_PATHS[object.kind]!(object), object);
  const kubeconfig = join(cp.dir, 'chart-serviceaccount.kubeconfig');
  await writeFile(
    kubeconfig,
    cp.serviceAccountKubeConfig(namespace, chart.one('ServiceAccount').metadata.name).exportConfig(),
    { mode: 0o600 },
  );
  return { chart, kubeconfig };
}
