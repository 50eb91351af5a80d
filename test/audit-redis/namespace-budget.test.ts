import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeDecision,
  DEFAULT_ENGINE_SETTINGS,
  evaluateProposal,
  namespaceRateLimitKey,
  rateLimitKey,
} from '../../src/engine/index.js';
import { capability, grant, NOON_UTC, proposal, tenantWorld } from '../../src/engine/test-fixtures.js';
import { RedisRateLimiter } from '../../src/rate-limit/redis-rate-limiter.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.dispose();
});

const replicas = (prefix: string) =>
  [1, 2].map(() => new RedisRateLimiter({ url: redis.url, timeoutMs: 2_000, keyPrefix: prefix }));

describe('RedisRateLimiter, several limits at once', () => {
  const grantLimit = { key: rateLimitKey('team-a/bot', 'db.query'), maxRequests: 5, windowSeconds: 60 };
  const budget = { key: namespaceRateLimitKey('team-a'), maxRequests: 2, windowSeconds: 60 };

  it('admits only when every limit admits; a refusal by one spends none of the others; peeks spend nothing', async () => {
    const [a, b] = replicas('all-test:');
    try {
      expect(await a!.peekAll([grantLimit, budget])).toEqual({ admitted: true, remaining: [4, 1] });
      expect(await a!.admitAll([grantLimit, budget])).toEqual({ admitted: true, remaining: [4, 1] });
      expect(await b!.admitAll([grantLimit, budget])).toEqual({ admitted: true, remaining: [3, 0] });
      expect(await a!.peekAll([grantLimit, budget])).toEqual({
        admitted: false,
        remaining: [3, 0],
        refusedBy: 1,
      });
      expect(await b!.admitAll([grantLimit, budget])).toEqual({
        admitted: false,
        remaining: [3, 0],
        refusedBy: 1,
      });
      // Refused by the budget, the grant's limit kept its count.
      expect(await a!.peek(grantLimit)).toEqual({ admitted: true, remaining: 2 });
      const full = { ...grantLimit, key: 'full', maxRequests: 1 };
      const fresh = { ...budget, key: 'fresh' };
      await a!.admit(full);
      expect(await b!.admitAll([full, fresh])).toMatchObject({ admitted: false, refusedBy: 0 });
      expect(await a!.peek(fresh)).toEqual({ admitted: true, remaining: 1 });
      expect(await a!.admitAll([])).toEqual({ admitted: true, remaining: [] });
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  it("two actors of one namespace share the Delegation's budget across two replicas", async () => {
    const snap = tenantWorld([capability('db.query')], {
      delegations: [
        {
          name: 'team-a',
          spec: {
            namespaces: ['team-a'],
            capabilities: ['db.*'],
            maxRiskLevel: 'high',
            rateLimit: { maxRequests: 3, windowSeconds: 60 },
          },
        },
      ],
      grants: { 'team-a': ['bot', 'other'].map((id) => grant(id, id, [{ capability: 'db.query' }])) },
    });
    const [a, b] = replicas('budget-test:');
    const propose = async (limiter: RedisRateLimiter, actor: string) => {
      const pre = evaluateProposal(
        snap,
        proposal('db.query', {}, { id: actor }),
        NOON_UTC,
        DEFAULT_ENGINE_SETTINGS,
      );
      return completeDecision(pre, await limiter.admitAll(pre.rateLimits));
    };
    try {
      const outcomes = [];
      for (const [limiter, actor] of [
        [a!, 'team-a/bot'],
        [b!, 'team-a/other'],
        [b!, 'team-a/bot'],
        [a!, 'team-a/other'],
        [b!, 'team-a/bot'],
      ] as const)
        outcomes.push(await propose(limiter, actor));
      expect(outcomes.map((d) => d.outcome)).toEqual(['ALLOW', 'ALLOW', 'ALLOW', 'DENY', 'DENY']);
      expect(outcomes[3]!.evaluation.authority_check).toBe('rate_limited');
      expect(outcomes[3]!.reason).toContain(
        'namespace team-a may propose at most 3 time(s) per 60 second(s)',
      );
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });
});
