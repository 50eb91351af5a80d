import { describe, expect, it } from 'vitest';
import { buildIndex } from '../index/index.js';
import type { Outcome, PolicyRuleSpec } from '../model/index.js';
import { completeDecision } from './complete-decision.js';
import { decide } from './decide.js';
import { DEFAULT_ENGINE_SETTINGS, resolveEngineSettings } from './engine-settings.js';
import { evaluateProposal } from './evaluate-proposal.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { capability, grant, NOON_UTC, policy, proposal, REFUSED, world } from './test-fixtures.js';

const settings = DEFAULT_ENGINE_SETTINGS;
const run = (snapshot = world(), p = proposal('files.read'), now = NOON_UTC, s = settings) =>
  decide(snapshot, p, now, s, new MemoryRateLimiter());
const withRules = (...rules: Array<Partial<PolicyRuleSpec> & { outcome: Outcome }>) =>
  world(
    policy(
      'p',
      rules.map((r) => ({ capability: 'files.read', ...r })),
    ),
  );

describe('capability check', () => {
  it('denies an unregistered capability with not_registered and skips the rest', () => {
    const d = run(world(), proposal('files.delete'));
    expect(d.outcome).toBe('DENY');
    expect(d.reason).toBe('Capability files.delete is not registered.');
    expect(d.evaluation).toMatchObject({
      capability_check: 'not_registered',
      authority_check: 'skipped',
      policies_evaluated: [],
    });
    expect(d.risk_score).toBe(0.85); // critical base for an unknown capability, automation +0
  });

  it('denies parameters that fail the schema and names the field', () => {
    const d = run(world(), proposal('files.read', { path: 42 }));
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation.capability_check).toBe('invalid_parameters');
    expect(d.reason).toContain('parameters.path: must be string');
  });
});

describe('capability check of a pinned MCP tool', () => {
  const pinned = `sha256:${'a'.repeat(64)}`;
  const changed = `sha256:${'b'.repeat(64)}`;
  const snapshot = buildIndex([
    capability('mcp.notes.add_note', {
      parameterSchema: { type: 'object', properties: { title: { type: 'string' } } },
      mcp: { server: 'notes', tool: 'add_note', definitionDigest: pinned },
    }),
    grant('g', 'agent-1', [{ capability: 'mcp.notes.add_note' }]),
  ]);
  const evaluate = (observed: Parameters<typeof evaluateProposal>[4], parameters = {}) =>
    evaluateProposal(snapshot, proposal('mcp.notes.add_note', parameters), NOON_UTC, settings, observed)
      .decision;

  it('denies a definition other than the pinned one with definition_changed, naming both digests', () => {
    const d = evaluate({ toolDefinitionDigest: changed }, { title: 42 });
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation).toMatchObject({
      capability_check: 'definition_changed',
      authority_check: 'skipped',
    });
    expect(d.reason).toBe(
      `The definition of MCP tool add_note of server notes changed since mcp.notes.add_note was pinned: pinned ${pinned}, now ${changed}; review it and pin it again.`,
    );
  });

  it('denies a tool the upstream no longer lists', () => {
    const d = evaluate({ toolDefinitionDigest: null });
    expect(d.evaluation.capability_check).toBe('definition_changed');
    expect(d.reason).toContain(`pinned ${pinned}, now none (the upstream no longer lists it)`);
  });

  it('passes the pinned definition, and decides as before when nothing was observed', () => {
    expect(evaluate({ toolDefinitionDigest: pinned }).outcome).toBe('ALLOW');
    expect(evaluate({}).outcome).toBe('ALLOW');
    expect(evaluate(undefined).evaluation.capability_check).toBe('pass');
  });

  it('does not check a capability without a pin', () => {
    const d = evaluateProposal(world(), proposal('files.read'), NOON_UTC, settings, {
      toolDefinitionDigest: changed,
    }).decision;
    expect(d.evaluation.capability_check).toBe('pass');
  });
});

describe('authority check', () => {
  it('denies without a grant (no_grant)', () => {
    const d = run(world(), proposal('files.read', {}, { id: 'stranger' }));
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation).toMatchObject({ capability_check: 'pass', authority_check: 'no_grant', rules: [] });
    expect(d.reason).toBe('Actor stranger has no grant for capability files.read.');
  });

  it('applies a grant pinned to an actor type only to that type', () => {
    const snap = buildIndex([
      capability('files.read'),
      grant('g', 'bob', [{ capability: 'files.read' }], 'human'),
    ]);
    expect(run(snap, proposal('files.read', {}, { id: 'bob', type: 'human' })).outcome).toBe('ALLOW');
    const d = run(snap, proposal('files.read', {}, { id: 'bob', type: 'ai-agent' }));
    expect(d.evaluation.authority_check).toBe('no_grant');
    expect(d.reason).toContain('only as type human');
  });

  const windowed = (start: string, end: string, timezone = 'Europe/Berlin') =>
    buildIndex([
      capability('files.read'),
      grant('g', 'agent-1', [
        { capability: 'files.read', constraints: { timeWindow: { start, end, timezone } } },
      ]),
    ]);

  it.each([
    ['09:00', '17:00', '2024-01-15T08:00:00Z', 'ALLOW'],
    ['09:00', '17:00', '2024-01-15T16:30:00Z', 'DENY'],
    ['22:00', '06:00', '2024-01-15T23:30:00Z', 'ALLOW'],
    ['22:00', '06:00', '2024-01-15T12:00:00Z', 'DENY'],
  ])('time window %s-%s Europe/Berlin at %s -> %s', (start, end, iso, outcome) => {
    const d = run(windowed(start, end), proposal('files.read'), new Date(iso));
    expect(d.outcome).toBe(outcome);
    if (outcome === 'DENY') expect(d.evaluation.authority_check).toBe('outside_time_window');
  });

  it('says when the window is and what time it is there', () => {
    const d = run(windowed('09:00', '17:00'), proposal('files.read'), new Date('2024-01-15T17:45:00Z'));
    expect(d.reason).toBe(
      'Actor agent-1 may use files.read only between 09:00 and 17:00 (Europe/Berlin); it is 18:45 there.',
    );
  });

  it('fails closed on an unknown time zone', () => {
    const d = run(windowed('00:00', '00:00', 'Atlantis/Capital'));
    expect(d.outcome).toBe('DENY');
    expect(d.evaluation.authority_check).toBe('outside_time_window');
    expect(d.reason).toContain('Atlantis/Capital is not a known time zone');
  });

  it('denies over the rate limit as a decision (rate_limited), and slides', () => {
    const snap = buildIndex([
      capability('files.read'),
      grant('g', 'agent-1', [
        { capability: 'files.read', constraints: { rateLimit: { maxRequests: 2, windowSeconds: 60 } } },
      ]),
      policy('p', [{ capability: 'files.read', outcome: 'REQUIRE_CONFIRMATION' }]),
    ]);
    const limiter = new MemoryRateLimiter();
    const at = (s: number) =>
      decide(snap, proposal('files.read'), new Date(NOON_UTC.getTime() + s * 1000), settings, limiter);
    expect(at(0).outcome).toBe('REQUIRE_CONFIRMATION');
    expect(at(1).outcome).toBe('REQUIRE_CONFIRMATION');
    const limited = at(2);
    expect(limited.outcome).toBe('DENY');
    expect(limited.reason).toBe(
      'Rate limit exceeded: actor agent-1 may propose files.read at most 2 time(s) per 60 second(s).',
    );
    expect(limited.evaluation).toMatchObject({
      authority_check: 'rate_limited',
      policies_evaluated: [],
      policy_matched: null,
      rules: [],
    });
    expect(at(60).outcome).toBe('REQUIRE_CONFIRMATION');
  });

  it('asks for the rate limit only when capability and authority pass', () => {
    const snap = buildIndex([
      capability('files.read', { parameterSchema: { type: 'object', required: ['path'] } }),
      grant('g', 'agent-1', [
        { capability: 'files.read', constraints: { rateLimit: { maxRequests: 1, windowSeconds: 60 } } },
      ]),
    ]);
    expect(evaluateProposal(snap, proposal('files.read'), NOON_UTC, settings).rateLimits).toEqual([]);
    expect(
      evaluateProposal(snap, proposal('files.read', { path: '/' }, { id: 'x' }), NOON_UTC, settings)
        .rateLimits,
    ).toEqual([]);
    const pre = evaluateProposal(snap, proposal('files.read', { path: '/' }), NOON_UTC, settings);
    expect(pre.rateLimits).toEqual([
      { scope: 'grant', key: 'agent-1|files.read', maxRequests: 1, windowSeconds: 60 },
    ]);
    expect(completeDecision(pre, true)).toBe(pre.decision);
    expect(completeDecision(pre, REFUSED).evaluation.authority_check).toBe('rate_limited');
  });

  it('applies the most permissive of several open grants', () => {
    const limited = (maxRequests: number, windowSeconds: number) => ({
      rateLimit: { maxRequests, windowSeconds },
    });
    const snap = buildIndex([
      capability('files.read'),
      grant('a', 'agent-1', [{ capability: 'files.read', constraints: limited(1, 60) }]),
      grant('b', 'agent-1', [{ capability: 'files.read', constraints: limited(100, 60) }]),
      grant('c', 'agent-1', [
        {
          capability: 'files.read',
          constraints: { timeWindow: { start: '00:00', end: '00:01', timezone: 'UTC' } }, // closed at noon
        },
      ]),
    ]);
    const pre = evaluateProposal(snap, proposal('files.read'), NOON_UTC, settings);
    expect(pre.rateLimits[0]?.maxRequests).toBe(100);
    const unlimited = buildIndex([...snap.objects(), grant('d', 'agent-1', [{ capability: 'files.read' }])]);
    expect(evaluateProposal(unlimited, proposal('files.read'), NOON_UTC, settings).rateLimits).toEqual([]);
  });
});

describe('policy evaluation', () => {
  it('allows when no rule matches (the grant authorizes)', () => {
    const d = run(
      withRules({ condition: 'parameters.amount > 10', outcome: 'DENY' }),
      proposal('files.read', { amount: 1 }),
    );
    expect(d.outcome).toBe('ALLOW');
    expect(d.reason).toBe('No policy rule matched; the grant authorizes the action.');
    expect(d.evaluation).toMatchObject({
      policies_evaluated: ['p'],
      policy_matched: null,
      rule_matched: null,
    });
  });

  it('denies when no rule matches and the server default is DENY', () => {
    const d = run(
      world(),
      proposal('files.read'),
      NOON_UTC,
      resolveEngineSettings({ defaultOutcome: 'DENY' }),
    );
    expect(d.outcome).toBe('DENY');
    expect(d.reason).toContain('denies what no rule allows');
  });

  it('treats a rule without condition as always matching', () => {
    expect(run(withRules({ outcome: 'ESCALATE' })).outcome).toBe('ESCALATE');
  });

  it.each([
    [
      'higher priority wins over restrictiveness',
      [
        { outcome: 'ALLOW', priority: 10 },
        { outcome: 'DENY', priority: 5 },
      ],
      'ALLOW',
      0,
    ],
    [
      'negative priorities',
      [
        { outcome: 'DENY', priority: -5 },
        { outcome: 'REQUIRE_CONFIRMATION', priority: -1 },
      ],
      'REQUIRE_CONFIRMATION',
      1,
    ],
    ['equal priority: DENY beats ESCALATE', [{ outcome: 'ESCALATE' }, { outcome: 'DENY' }], 'DENY', 1],
    [
      'equal priority: ESCALATE beats REQUIRE_CONFIRMATION',
      [{ outcome: 'REQUIRE_CONFIRMATION' }, { outcome: 'ESCALATE' }],
      'ESCALATE',
      1,
    ],
    [
      'equal priority: REQUIRE_CONFIRMATION beats ALLOW',
      [{ outcome: 'ALLOW' }, { outcome: 'REQUIRE_CONFIRMATION' }],
      'REQUIRE_CONFIRMATION',
      1,
    ],
    ['equal priority and outcome: the earlier rule', [{ outcome: 'DENY' }, { outcome: 'DENY' }], 'DENY', 0],
    [
      'a non-matching higher rule does not count',
      [{ outcome: 'ALLOW', priority: 99, condition: 'false' }, { outcome: 'DENY' }],
      'DENY',
      1,
    ],
  ] as Array<[string, Array<{ outcome: Outcome; priority?: number; condition?: string }>, Outcome, number]>)(
    '%s',
    (_, rules, outcome, ruleIndex) => {
      const d = run(withRules(...rules));
      expect(d.outcome).toBe(outcome);
      expect(d.evaluation.rule_matched).toMatchObject({ policy: 'p', rule_index: ruleIndex, outcome });
      expect(d.evaluation.policy_matched).toBe('p');
    },
  );

  it('ties across policies go to the more restrictive outcome, then the policy name', () => {
    const snap = world(
      policy('b-allow', [{ capability: 'files.read', outcome: 'ALLOW', priority: 1 }]),
      policy('a-confirm', [{ capability: 'files.read', outcome: 'REQUIRE_CONFIRMATION', priority: 1 }]),
      policy('c-confirm', [{ capability: 'files.read', outcome: 'REQUIRE_CONFIRMATION', priority: 1 }]),
      policy('other', [{ capability: 'files.write', outcome: 'DENY', priority: 9 }]),
    );
    const d = run(snap);
    expect(d.evaluation.policy_matched).toBe('a-confirm');
    expect(d.evaluation.policies_evaluated).toEqual(['a-confirm', 'b-allow', 'c-confirm']);
    expect(d.reason).toBe('Confirmation required by policy a-confirm (rule 0, priority 1).');
  });

  it('counts an erroring condition as matching when its outcome restricts', () => {
    const d = run(withRules({ condition: 'parameters.missing > 1', outcome: 'DENY' }));
    expect(d.outcome).toBe('DENY');
    const rule = d.evaluation.rules[0];
    expect(rule).toMatchObject({ matched: true, outcome: 'DENY' });
    expect(rule?.error).toMatch(/missing/);
    expect(d.reason).toMatch(/could not be evaluated .* never lifts a restriction/);
  });

  it('counts an erroring condition as not matching when its outcome is ALLOW', () => {
    const d = run(
      withRules(
        { condition: 'parameters.missing > 1', outcome: 'ALLOW', priority: 10 },
        { outcome: 'REQUIRE_CONFIRMATION', priority: 1 },
      ),
    );
    expect(d.outcome).toBe('REQUIRE_CONFIRMATION');
    expect(d.evaluation.rules[0]).toMatchObject({ matched: false, outcome: 'ALLOW' });
    expect(d.evaluation.rules[0]?.error).toBeDefined();
  });

  it.each([
    ['parameters.amount > 1000', { amount: 5000 }, 'DENY'],
    ['parameters.amount > 1000', { amount: 1000 }, 'ALLOW'],
    ['parameters.amount > 1000', { amount: 1000.01 }, 'DENY'],
    ['parameters.amount == 5', { amount: 5 }, 'DENY'],
    ['parameters.count + 1 > 6', { count: 6 }, 'DENY'],
    ["parameters.path == '/etc/passwd'", { path: '/etc/passwd' }, 'DENY'],
    [
      "parameters.path.startsWith('/etc') and not (parameters.path == '/etc/hosts')",
      { path: '/etc/shadow' },
      'DENY',
    ],
    [
      "parameters.path.startsWith('/etc') and not (parameters.path == '/etc/hosts')",
      { path: '/etc/hosts' },
      'ALLOW',
    ],
    ["parameters.path == 'x' or parameters.amount < 0", { path: 'y', amount: -1 }, 'DENY'],
    ["actor.type == 'automation' && time.hour == 12 && time.day_of_week == 2", {}, 'DENY'],
  ])('condition %s with %j -> %s', (condition, parameters, outcome) => {
    expect(run(withRules({ condition, outcome: 'DENY' }), proposal('files.read', parameters)).outcome).toBe(
      outcome,
    );
  });

  it('does not evaluate rules of disabled policies', () => {
    const d = run(world(policy('off', [{ capability: 'files.read', outcome: 'DENY' }], false)));
    expect(d.outcome).toBe('ALLOW');
    expect(d.evaluation.policies_evaluated).toEqual([]);
  });
});

describe('risk override', () => {
  const risky = (outcome: Outcome) =>
    buildIndex([
      capability('db.drop', { riskLevel: 'critical' }),
      grant('g', 'agent-1', [{ capability: 'db.drop' }]),
      policy('p', [{ capability: 'db.drop', outcome }]),
    ]);

  it.each([
    ['ALLOW', 'ESCALATE', true],
    ['REQUIRE_CONFIRMATION', 'ESCALATE', true],
    ['ESCALATE', 'ESCALATE', false],
    ['DENY', 'DENY', false],
  ] as Array<[Outcome, Outcome, boolean]>)(
    '%s above the threshold -> %s',
    (policyOutcome, outcome, override) => {
      const d = run(risky(policyOutcome), proposal('db.drop'));
      expect(d.risk_score).toBe(0.85);
      expect(d.outcome).toBe(outcome);
      expect(d.evaluation.risk_override).toBe(override);
      if (override)
        expect(d.reason).toMatch(/^Escalated for review: the risk score 0.85 exceeds the threshold 0.8\./);
    },
  );

  it('does not override at exactly the threshold', () => {
    const d = run(
      risky('ALLOW'),
      proposal('db.drop'),
      NOON_UTC,
      resolveEngineSettings({ riskThreshold: 0.85 }),
    );
    expect(d.outcome).toBe('ALLOW');
  });
});

describe('decision shape', () => {
  it('returns the applied grant constraints in snake_case for ALLOW, with remaining', () => {
    const snap = buildIndex([
      capability('files.read'),
      grant('g', 'agent-1', [
        {
          capability: 'files.read',
          constraints: {
            timeWindow: { start: '00:00', end: '00:00', timezone: 'UTC' },
            rateLimit: { maxRequests: 5, windowSeconds: 60 },
          },
        },
      ]),
    ]);
    expect(run(snap).constraints).toEqual({
      time_window: { start: '00:00', end: '00:00', timezone: 'UTC' },
      rate_limit: { max_requests: 5, window_seconds: 60, remaining: 4 },
    });
    const pre = evaluateProposal(snap, proposal('files.read'), NOON_UTC, settings);
    expect(completeDecision(pre, true).constraints.rate_limit).toEqual({
      max_requests: 5,
      window_seconds: 60,
    });
  });

  it('returns empty constraints for anything but ALLOW', () => {
    expect(run(withRules({ outcome: 'REQUIRE_CONFIRMATION' })).constraints).toEqual({});
  });

  it('fills every field of the evaluation trail', () => {
    const d = run(withRules({ outcome: 'ALLOW', priority: 2, condition: 'true' }));
    expect(d.evaluation).toEqual({
      capability_check: 'pass',
      authority_check: 'pass',
      risk_score: 0.1,
      risk_threshold: 0.8,
      policies_evaluated: ['p'],
      policy_matched: 'p',
      rule_matched: { policy: 'p', rule_index: 0, priority: 2, outcome: 'ALLOW' },
      rules: [{ policy: 'p', rule_index: 0, priority: 2, outcome: 'ALLOW', matched: true }],
      risk_override: false,
    });
    expect(d.reason).toBe('Allowed by policy p (rule 0, priority 2).');
  });
});

describe('which of several open grants applies', () => {
  const limited = (name: string, maxRequests: number, windowSeconds: number, start = '00:00') =>
    grant(name, 'agent-1', [
      {
        capability: 'files.read',
        constraints: {
          rateLimit: { maxRequests, windowSeconds },
          timeWindow: { start, end: start, timezone: 'UTC' },
        },
      },
    ]);
  const applied = (...grants: ReturnType<typeof grant>[]) =>
    evaluateProposal(
      buildIndex([capability('files.read'), ...grants]),
      proposal('files.read'),
      NOON_UTC,
      settings,
    ).decision.constraints;

  it('prefers no rate limit, whichever grant comes first', () => {
    const unlimited = grant('a', 'agent-1', [{ capability: 'files.read' }]);
    expect(applied(unlimited, limited('b', 5, 60))).toEqual({});
    expect(applied(limited('a', 5, 60), grant('b', 'agent-1', [{ capability: 'files.read' }]))).toEqual({});
  });

  it('compares rates per second, not request counts or windows alone', () => {
    // 10 per minute is slower than 5 per 10 s.
    expect(applied(limited('a', 10, 60), limited('b', 5, 10)).rate_limit).toEqual({
      max_requests: 5,
      window_seconds: 10,
    });
    expect(applied(limited('a', 5, 10), limited('b', 10, 60)).rate_limit).toEqual({
      max_requests: 5,
      window_seconds: 10,
    });
  });

  it('at the same rate takes the larger burst, and on a full tie keeps the first grant', () => {
    expect(applied(limited('a', 10, 10), limited('b', 20, 20)).rate_limit).toMatchObject({
      max_requests: 20,
    });
    expect(applied(limited('a', 20, 20), limited('b', 10, 10)).rate_limit).toMatchObject({
      max_requests: 20,
    });
    // Same limit, told apart by their (all-day) windows: the first by object name stays.
    expect(applied(limited('a', 10, 10, '01:00'), limited('b', 10, 10, '02:00')).time_window).toMatchObject({
      start: '01:00',
    });
  });

  it('names every closed window when none is open', () => {
    const closed = (name: string, start: string, end: string) =>
      grant(name, 'agent-1', [
        { capability: 'files.read', constraints: { timeWindow: { start, end, timezone: 'UTC' } } },
      ]);
    const d = run(
      buildIndex([capability('files.read'), closed('a', '01:00', '02:00'), closed('b', '03:00', '04:00')]),
    );
    expect(d.reason).toBe(
      'Actor agent-1 may use files.read only between 01:00 and 02:00 (UTC); it is 12:00 there; ' +
        'or between 03:00 and 04:00 (UTC); it is 12:00 there.',
    );
  });
});

describe('decision trail and reasons', () => {
  it('a denial before the policies never claims a risk override', () => {
    expect(run(world(), proposal('files.delete')).evaluation.risk_override).toBe(false);
  });

  it('a rate-limited denial drops the risk override of the policies it replaces', () => {
    const snap = buildIndex([
      capability('files.read', { riskLevel: 'critical' }),
      grant('g', 'agent-1', [
        { capability: 'files.read', constraints: { rateLimit: { maxRequests: 1, windowSeconds: 60 } } },
      ]),
    ]);
    const pre = evaluateProposal(snap, proposal('files.read'), NOON_UTC, settings);
    expect(pre.decision.evaluation.risk_override).toBe(true);
    expect(completeDecision(pre, REFUSED).evaluation.risk_override).toBe(false);
  });

  it('only an ALLOW carries the grant constraints, and only it gets remaining', () => {
    const snap = buildIndex([
      capability('files.read'),
      grant('g', 'agent-1', [
        { capability: 'files.read', constraints: { rateLimit: { maxRequests: 5, windowSeconds: 60 } } },
      ]),
      policy('p', [{ capability: 'files.read', outcome: 'REQUIRE_CONFIRMATION' }]),
    ]);
    const d = run(snap);
    expect(d.outcome).toBe('REQUIRE_CONFIRMATION');
    expect(d.constraints).toEqual({});
  });

  it.each([
    ['ALLOW', 'Allowed by policy p (rule 0, priority 0).'],
    ['DENY', 'Denied by policy p (rule 0, priority 0).'],
    ['ESCALATE', 'Escalated for review by policy p (rule 0, priority 0).'],
    ['REQUIRE_CONFIRMATION', 'Confirmation required by policy p (rule 0, priority 0).'],
  ] as const)('a %s rule gives the reason %j', (outcome, reason) => {
    expect(run(withRules({ outcome })).reason).toBe(reason);
  });

  it('refuses a default outcome other than ALLOW or DENY', () => {
    expect(() => resolveEngineSettings({ defaultOutcome: 'ESCALATE' as 'DENY' })).toThrow(
      'engine settings: defaultOutcome must be ALLOW or DENY',
    );
  });
});
