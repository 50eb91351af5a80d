import { describe, expect, it } from 'vitest';
import { delegation, nsPolicy } from '../engine/tenancy-fixtures.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import { RuleCoverageCounter } from './rule-coverage.js';

const snapshot = buildIndex([
  capability('db.write'),
  delegation('team-a', { capabilities: ['db.*'] }),
  grant('bot-grant', 'agent-1', [{ capability: 'db.write' }]),
  policy('cluster', [
    { capability: 'db.write', condition: "parameters.table == 'users'", outcome: 'ESCALATE' },
  ]),
  nsPolicy('team-a', 'strict', [
    { capability: 'db.write', condition: "parameters.table == 'orders'", outcome: 'DENY' },
    { capability: 'db.write', condition: "parameters.table == 'never'", outcome: 'DENY' },
  ]),
]);

describe('RuleCoverageCounter', () => {
  it("counts NamespacedPolicy rules, named ns/name, beside the cluster's", () => {
    const coverage = new RuleCoverageCounter();
    coverage.addRules(snapshot);
    expect(coverage.report().map((r) => [r.policy, r.ruleIndex])).toEqual([
      ['cluster', 0],
      ['team-a/strict', 0],
      ['team-a/strict', 1],
    ]);
  });
});
