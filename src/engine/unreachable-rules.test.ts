import { describe, expect, it } from 'vitest';
import { buildIndex } from '../index/index.js';
import { nsPolicy } from './tenancy-fixtures.js';
import { capability, policy } from './test-fixtures.js';
import { unreachableRules } from './unreachable-rules.js';

const world = (...policies: ReturnType<typeof policy>[]) => buildIndex([capability('db.write'), ...policies]);

describe('unreachableRules', () => {
  it('finds a rule that an unconditional rule of higher priority always beats', () => {
    const findings = unreachableRules(
      world(
        policy('catch-all', [{ capability: 'db.write', outcome: 'DENY', priority: 10 }]),
        policy('later', [{ capability: 'db.write', condition: "parameters.table == 'x'", outcome: 'ALLOW' }]),
      ),
    );
    expect(findings).toEqual([
      {
        kind: 'Policy',
        policy: 'later',
        ruleIndex: 0,
        capability: 'db.write',
        message:
          'rule 0 (capability db.write) can never decide: policy catch-all rule 0 (priority 10, no condition) always decides db.write first',
      },
    ]);
  });

  it('flags two unconditional rules at equal priority with different outcomes, on the one that loses', () => {
    const findings = unreachableRules(
      world(
        policy('a', [{ capability: 'db.write', outcome: 'ALLOW' }]),
        policy('b', [{ capability: 'db.write', outcome: 'ESCALATE' }]),
      ),
    );
    expect(findings.map((f) => [f.policy, f.ruleIndex])).toEqual([['a', 0]]);
    expect(findings[0]!.message).toContain(
      'like policy b rule 0 at the same priority 0, whose ESCALATE always wins over this ALLOW',
    );
  });

  it('says nothing when every rule can still decide', () => {
    expect(
      unreachableRules(
        world(
          policy('p', [
            { capability: 'db.write', condition: 'parameters.rows > 10', outcome: 'DENY', priority: 5 },
            { capability: 'db.write', outcome: 'ALLOW' },
            { capability: 'db.write', outcome: 'ALLOW' }, // the same outcome twice is redundant, not ambiguous
          ]),
          policy('off', [{ capability: 'db.write', outcome: 'DENY', priority: 99 }], false),
        ),
      ),
    ).toEqual([]);
  });

  it('ranks as the engine does: at equal priority a more restrictive unconditional rule always wins', () => {
    const findings = unreachableRules(
      world(
        policy('p', [
          { capability: 'db.write', outcome: 'DENY' },
          { capability: 'db.write', condition: 'parameters.ok', outcome: 'ALLOW' },
        ]),
      ),
    );
    expect(findings.map((f) => f.ruleIndex)).toEqual([1]);
  });
});

describe('unreachableRules: what counts as a tie', () => {
  it('reports a conditional rule beaten by an unconditional one at its own priority as unreachable, not as a tie', () => {
    const findings = unreachableRules(
      world(
        policy('p', [
          { capability: 'db.write', outcome: 'ESCALATE' },
          { capability: 'db.write', condition: 'parameters.ok', outcome: 'ALLOW' },
        ]),
      ),
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toMatch(
      /^rule 1 \(capability db\.write\) can never decide: policy p rule 0/,
    );
  });

  it('does not take rules at other priorities, or with the same outcome, for a tie', () => {
    const findings = unreachableRules(
      world(
        policy('p', [
          { capability: 'db.write', outcome: 'ALLOW' },
          { capability: 'db.write', outcome: 'ALLOW' },
          { capability: 'db.write', outcome: 'DENY', priority: 10 },
        ]),
      ),
    );
    expect(findings.map((f) => [f.ruleIndex, f.message.includes('can never decide')])).toEqual([
      [0, true],
      [1, true],
    ]);
  });

  it('lists findings by capability name, whatever the order of the policies', () => {
    const snapshot = buildIndex([
      capability('b.write'),
      capability('a.write'),
      policy('p', [
        { capability: 'b.write', outcome: 'DENY', priority: 1 },
        { capability: 'b.write', condition: 'true', outcome: 'ALLOW' },
        { capability: 'a.write', outcome: 'DENY', priority: 1 },
        { capability: 'a.write', condition: 'true', outcome: 'ALLOW' },
      ]),
    ]);
    expect(unreachableRules(snapshot).map((f) => f.capability)).toEqual(['a.write', 'b.write']);
  });
});

describe('unreachableRules: NamespacedPolicies', () => {
  it("finds a namespace's rules that its own unconditional rules always beat, named ns/name", () => {
    const snapshot = buildIndex([
      capability('db.write'),
      nsPolicy('team-a', 'catch-all', [{ capability: 'db.write', outcome: 'DENY', priority: 10 }]),
      nsPolicy('team-a', 'later', [{ capability: 'db.write', condition: 'true', outcome: 'ESCALATE' }]),
    ]);
    expect(unreachableRules(snapshot)).toEqual([
      {
        kind: 'NamespacedPolicy',
        policy: 'team-a/later',
        ruleIndex: 0,
        capability: 'db.write',
        message:
          'rule 0 (capability db.write) can never decide: policy team-a/catch-all rule 0 (priority 10, no condition) always decides db.write first',
      },
    ]);
  });

  it('compares rules only within their tier: the cluster and each namespace apart, cluster first', () => {
    const snapshot = buildIndex([
      capability('db.write'),
      policy('cluster-deny', [{ capability: 'db.write', outcome: 'DENY', priority: 10 }]),
      policy('cluster-later', [{ capability: 'db.write', condition: 'true', outcome: 'ALLOW' }]),
      nsPolicy('team-b', 'deny', [{ capability: 'db.write', outcome: 'DENY', priority: 10 }]),
      nsPolicy('team-b', 'later', [{ capability: 'db.write', condition: 'true', outcome: 'ESCALATE' }]),
      nsPolicy('team-a', 'alone', [{ capability: 'db.write', condition: 'true', outcome: 'ESCALATE' }]),
    ]);
    expect(unreachableRules(snapshot).map((f) => [f.kind, f.policy])).toEqual([
      ['Policy', 'cluster-later'],
      ['NamespacedPolicy', 'team-b/later'],
    ]);
  });
});
