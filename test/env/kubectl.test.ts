import { expect, it } from 'vitest';
import { describeWithControlPlane } from './describe-with-control-plane.js';
import { runKubectl } from './kubectl.js';

const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: from-stdin
  namespace: default
data:
  greeting: hello
`;

describeWithControlPlane('runKubectl', (controlPlane) => {
  it('applies a ConfigMap from stdin as admin and reads it back', async () => {
    const applied = await runKubectl(controlPlane(), ['apply', '-f', '-'], { stdin: CONFIG_MAP });
    expect(applied, applied.stderr).toMatchObject({ code: 0, stdout: 'configmap/from-stdin created\n' });

    const read = await runKubectl(controlPlane(), [
      '-n',
      'default',
      'get',
      'configmap',
      'from-stdin',
      '-o',
      'json',
    ]);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({
      metadata: { name: 'from-stdin' },
      data: { greeting: 'hello' },
    });
  });

  it('a server-side dry run changes nothing', async () => {
    const args = ['-n', 'default', 'create', 'configmap', 'dry', '--from-literal=a=b'];
    const dry = await runKubectl(controlPlane(), [...args, '--dry-run=server']);
    expect(dry, dry.stderr).toMatchObject({ code: 0, stdout: 'configmap/dry created (server dry run)\n' });
    const read = await runKubectl(controlPlane(), ['-n', 'default', 'get', 'configmap', 'dry']);
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/NotFound|not found/);
  });

  it('impersonates a ServiceAccount with --as: without RBAC it is forbidden, and that is a result', async () => {
    const result = await runKubectl(
      controlPlane(),
      ['-n', 'default', 'create', 'configmap', 'as-sa', '--from-literal=a=b'],
      { as: 'system:serviceaccount:x:y' },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /forbidden: User "system:serviceaccount:x:y" cannot create resource "configmaps" .* in the namespace "default"/,
    );
  });
});
