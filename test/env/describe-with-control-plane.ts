import { afterAll, beforeAll, describe } from 'vitest';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './kube-apiserver.js';

/**
 * A describe block with its own control plane, started once before its tests and stopped
 * after them. Without binaries it fails (never skips) with a message pointing at
 * test/env/setup. `controlPlane()` is only valid inside hooks and tests.
 */
export function describeWithControlPlane(
  name: string,
  body: (controlPlane: () => ControlPlane) => void,
  options: ControlPlaneOptions = {},
): void {
  describe(name, () => {
    let current: ControlPlane | undefined;
    beforeAll(async () => {
      current = await startControlPlane(options);
    });
    afterAll(async () => {
      await current?.stop();
    });
    body(() => {
      if (!current) throw new Error('the control plane is not running (did beforeAll fail? see its error)');
      return current;
    });
  });
}
