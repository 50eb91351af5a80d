import { describe, expect, it } from 'vitest';
import { AUTHORITY_CHECKS } from '../model/index.js';
import { parsePolicyTestSuite, TEST_API_VERSION } from './policy-test-suite.js';

const suite = (authorityCheck: string) => ({
  apiVersion: TEST_API_VERSION,
  kind: 'PolicyTest',
  metadata: { name: 'gate' },
  spec: {
    manifests: ['manifests/'],
    cases: [
      {
        name: 'a namespaced actor',
        proposal: {
          actor: { id: 'team-a/bot', type: 'automation' },
          action: { capability: 'db.query', parameters: {} },
        },
        expect: { outcome: 'DENY', authorityCheck },
      },
    ],
  },
});

describe('parsePolicyTestSuite', () => {
  it("accepts every authority check the engine reports, the Delegation gate's included", () => {
    expect(AUTHORITY_CHECKS).toEqual(expect.arrayContaining(['no_delegation', 'outside_delegation']));
    for (const check of AUTHORITY_CHECKS)
      expect(parsePolicyTestSuite(suite(check)), check).toHaveProperty('suite');
    expect(parsePolicyTestSuite(suite('no_such_check'))).toHaveProperty('errors');
  });
});
