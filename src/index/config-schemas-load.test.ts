import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../model/index.js';

describe('the kinds schemas', () => {
  it('compile in strict mode, knowing the CRD keyword for free-form parameter schemas', async () => {
    // Imported inside the test (the schemas compile at load): a load failure fails this test.
    const { validateConfigObject } = await import('./validate-config-object.js');
    const result = validateConfigObject({
      apiVersion: API_VERSION,
      kind: 'Capability',
      metadata: { name: 'payments-refund' },
      spec: { name: 'payments.refund', riskLevel: 'high', parameterSchema: { type: 'object' } },
    });
    expect(result.ok).toBe(true);
  });
});
