import { describe, expect, it } from 'vitest';
import type { DelegationSpec } from '../model/index.js';
import { completeDecision } from './complete-decision.js';
import { decide } from './decide.js';
import { DEFAULT_ENGINE_SETTINGS } from './engine-settings.js';
import { evaluateProposal } from './evaluate-proposal.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { namespaceRateLimitKey, rateLimitKey } from './rate-limiter.js';
import { capability, grant, NOON_UTC, proposal, tenantWorld } from './test-fixtures.js';

const settings = DEFAULT_ENGINE_SETTINGS;
const budget = { maxRequests: 3, windowSeconds: 60 };
const DELEGATION: DelegationSpec = {
  namespaces: ['team-a', 'team-b'],
  capabilities: ['db.*'],
  maxRiskLevel: 'high',
  rateLimit: budget,
};
const capabilities = [capability('db.query'), capability('db.write'), capability('files.read')];
const bots = (...ids: string[]) =>
  ids.map((id) => grant(id, id, [{ capability: 'db.query' }, { capability: 'db.write' }]));
const world = (
  spec: DelegationSpec = DELEGATION,
  cluster = [grant('c', 'team-a/ops', [{ capability: 'files.read' }])],
) =>
  tenantWorld([...capabilities, ...cluster], {
    delegations: [{ name: 'teams', spec }],
    grants: { 'team-a': bots('bot', 'other'), 'team-b': bots('bot') },
  });
const at = (s: number) => new Date(NOON_UTC.getTime() + s * 1000);

describe("the Delegation's rate limit: one budget per namespace", () => {
  it('is shared by all actors of the namespace, across capabilities, and names the namespace when spent', () => {
    const snap = world();
    const limiter = new MemoryRateLimiter();
    const run = (actor: string, cap: string, s = 0) =>
      decide(snap, proposal(cap, {}, { id: actor }), at(s), settings, limiter);
    expect(run('team-a/bot', 'db.query').outcome).toBe('ALLOW');
    expect(run('team-a/other', 'db.write').outcome).toBe('ALLOW');
    expect(run('team-a/bot', 'db.write').outcome).toBe('ALLOW');
    const spent = run('team-a/other', 'db.query');
    expect(spent.outcome).toBe('DENY');
    expect(spent.evaluation).toMatchObject({
      authority_check: 'rate_limited',
      policies_evaluated: [],
      rules: [],
    });
    expect(spent.reason).toBe(
      'Rate limit exceeded: namespace team-a may propose at most 3 time(s) per 60 second(s), ' +
        'shared by all its actors (the budget of Delegation teams).',
    );
    // Another namespace of the same Delegation has its own budget.
    expect(run('team-b/bot', 'db.query').outcome).toBe('ALLOW');
    // The window slides as the grant's does.
    expect(run('team-a/other', 'db.query', 61).outcome).toBe('ALLOW');
  });

  it('is charged whatever grant authorizes: a cluster grant of a namespaced actor too', () => {
    const snap = world({ ...DELEGATION, rateLimit: { maxRequests: 1, windowSeconds: 60 } });
    const limiter = new MemoryRateLimiter();
    const run = (actor: string, cap: string) =>
      decide(snap, proposal(cap, {}, { id: actor }), NOON_UTC, settings, limiter);
    expect(run('team-a/ops', 'files.read').outcome).toBe('ALLOW');
    expect(run('team-a/bot', 'db.query').evaluation.authority_check).toBe('rate_limited');
  });

  it('asks for the grant limit first, then the namespace budget; none for cluster actors or without a budget', () => {
    const limited = grant('c', 'team-a/ops', [
      { capability: 'files.read', constraints: { rateLimit: { maxRequests: 5, windowSeconds: 10 } } },
    ]);
    const pre = evaluateProposal(
      world(DELEGATION, [limited]),
      proposal('files.read', {}, { id: 'team-a/ops' }),
      NOON_UTC,
      settings,
    );
    expect(pre.rateLimits).toEqual([
      { scope: 'grant', key: rateLimitKey('team-a/ops', 'files.read'), maxRequests: 5, windowSeconds: 10 },
      {
        scope: 'namespace',
        namespace: 'team-a',
        delegation: 'teams',
        key: namespaceRateLimitKey('team-a'),
        ...budget,
      },
    ]);
    const { rateLimit: _none, ...unlimited } = DELEGATION;
    const bare = evaluateProposal(
      world(unlimited),
      proposal('db.query', {}, { id: 'team-a/bot' }),
      NOON_UTC,
      settings,
    );
    expect(bare.rateLimits).toEqual([]);
    const refused = evaluateProposal(
      world(),
      proposal('files.read', {}, { id: 'team-a/bot' }),
      NOON_UTC,
      settings,
    );
    expect(refused.rateLimits).toEqual([]);
    // A refusal by the grant's limit is reported as the grant's.
    expect(completeDecision(pre, { admitted: false, remaining: [0, 0], refusedBy: 0 }).reason).toBe(
      'Rate limit exceeded: actor team-a/ops may propose files.read at most 5 time(s) per 10 second(s).',
    );
  });

  it('never shares a counter with a grant, whatever the actor and capability are called', () => {
    expect(namespaceRateLimitKey('team-a')).not.toBe(rateLimitKey('namespace', 'team-a'));
    expect(namespaceRateLimitKey('team-a')).not.toContain('|');
    for (const actor of ['namespace', 'namespace:team-a', 'a|b', 'team-a/bot'])
      expect(rateLimitKey(actor, 'x')).toContain('|');
  });
});
