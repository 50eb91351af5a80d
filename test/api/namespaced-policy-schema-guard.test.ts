import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

/** A NamespacedPolicy waiting for a capability that is not registered yet: its parameters are untyped. */
const WAITING = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: typed, namespace: team-a}
spec:
  rules: [{capability: later.query, condition: "parameters.query", outcome: DENY}]
`;

let arbiter: ArbiterProcess;

beforeAll(async () => {
  const manifestsDir = await tempManifests();
  await writeFile(join(manifestsDir, 'waiting.yaml'), WAITING);
  arbiter = await startArbiter({ manifestsDir, dataDir: await tempDir() });
});

afterAll(async () => {
  if (!arbiter?.child) return;
  await arbiter.stop();
  await removeDir(arbiter.dataDir);
  await removeDir(arbiter.manifestsDir);
});

describe('POST /api/v1/capabilities and NamespacedPolicies', () => {
  it('refuses a parameter schema that would take a NamespacedPolicy out of use, as for a Policy', async () => {
    const register = (type: string) =>
      call(arbiter.url, 'POST', '/api/v1/capabilities', {
        key: KEYS.admin,
        body: {
          name: 'later.query',
          risk_level: 'low',
          parameter_schema: { type: 'object', properties: { query: { type } } },
        },
      });
    const breaking = await register('string');
    expect(breaking.status, JSON.stringify(breaking.body)).toBe(400);
    expect(breaking.body.error.message).toMatch(
      /^spec\.parameterSchema would take NamespacedPolicy team-a\/typed out of use \(.*\); change the policy first$/,
    );
    expect((await register('boolean')).status).toBe(201);
  });
});
