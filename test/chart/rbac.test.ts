import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO, renderChart, type KubeObject } from './support/render-chart.js';

/** The least-privilege RBAC the operator tests run the controller with (test/operator). */
const DEPLOY_RBAC = join(REPO, 'deploy/rbac/controller-rbac.yaml');
/** The chart's copy, which its rbac.yaml template reads the rules from. */
const CHART_RBAC = join(CHART_DIR, 'files/rbac/controller-rbac.yaml');
const UPDATE_COMMAND = 'ARBITER_UPDATE_CHART_RBAC=1 npx vitest run test/chart/rbac.test.ts';

async function deployRbac(): Promise<{ text: string; objects: KubeObject[] }> {
  if (!existsSync(DEPLOY_RBAC)) {
    throw new Error(
      `${DEPLOY_RBAC} is missing: the chart's RBAC must equal the controller's least-privilege rules ` +
        'kept in deploy/rbac (test/operator runs the controller with them); restore the file, or point this test at its new place',
    );
  }
  const text = await readFile(DEPLOY_RBAC, 'utf8');
  return { text, objects: parseAllDocuments(text).map((doc) => doc.toJS() as KubeObject) };
}

function only(objects: KubeObject[], kind: string): KubeObject {
  const found = objects.filter((object) => object.kind === kind);
  expect(found, `exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

describe('the chart RBAC', () => {
  it("reads its rules from an exact copy of deploy/rbac's", async () => {
    const { text } = await deployRbac();
    if (process.env.ARBITER_UPDATE_CHART_RBAC === '1') {
      await mkdir(join(CHART_DIR, 'files/rbac'), { recursive: true });
      await writeFile(CHART_RBAC, text);
    }
    expect(
      await readFile(CHART_RBAC, 'utf8'),
      `charts/arbiter/files/rbac is stale; run \`${UPDATE_COMMAND}\``,
    ).toBe(text);
  });

  it("renders exactly deploy/rbac's rules, bound to the chart's ServiceAccount in the release namespace", async () => {
    const deploy = (await deployRbac()).objects;
    expect(deploy.map((o) => o.kind).sort()).toEqual(
      ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount'].sort(),
    );
    for (const namespace of ['arbiter-system', 'governance']) {
      const chart = await renderChart({ name: 'gov', namespace });
      const clusterRole = chart.one('ClusterRole');
      const role = chart.one('Role');
      expect(clusterRole.rules).toEqual(only(deploy, 'ClusterRole').rules);
      expect(role.rules).toEqual(only(deploy, 'Role').rules);
      expect(role.metadata.namespace).toBe(namespace);
      const serviceAccount = chart.one('ServiceAccount');
      const subject = { kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace };
      expect(serviceAccount.metadata.namespace).toBe(namespace);
      expect(chart.one('ClusterRoleBinding')).toMatchObject({
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: clusterRole.metadata.name,
        },
        subjects: [subject],
      });
      expect(chart.one('RoleBinding')).toMatchObject({
        metadata: { namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name },
        subjects: [subject],
      });
      // The Lease the controller elects its leader on is in the Role's namespace.
      expect(chart.one('Deployment').spec.template.spec.containers[0].env).toContainEqual({
        name: 'POD_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
    }
  });

  it('is left out with rbac.create=false', async () => {
    const chart = await renderChart({ values: { rbac: { create: false } } });
    for (const kind of ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'])
      expect(chart.all(kind)).toEqual([]);
  });
});
