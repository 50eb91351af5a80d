import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { capability, grant, policy, proposal } from '../../src/engine/test-fixtures.js';
import { InPathDecisions, type InPathRequest } from '../../src/governance/in-path-decisions.js';
import { serviceOnTempLog, type ServiceOnTempLog } from '../../src/governance/test-decision-service.js';
import { buildIndex } from '../../src/index/index.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../../src/engine/index.js';
import { RedisOneTimeUses } from '../../src/one-time-uses/index.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.dispose();
});

const UNAVAILABLE = {
  code: 'UNAVAILABLE',
  message:
    'the store of one-time uses (Redis) is unavailable, so no approval or confirmation token can be used now; failing closed',
};

describe('RedisOneTimeUses', () => {
  it('grants a key to one of many replicas claiming at once, until the claim ends or is released', async () => {
    const replicas = [0, 1, 2, 3].map(
      () => new RedisOneTimeUses({ url: redis.url, timeoutMs: 2_000, keyPrefix: 'uses-test:' }),
    );
    try {
      const until = new Date(Date.now() + 60_000);
      const claims = await Promise.all(
        Array.from({ length: 40 }, (_, i) => replicas[i % replicas.length]!.claim('approval:d-1', until)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await replicas[1]!.claim('approval:d-2', until)).toBe(true);
      await replicas[2]!.release('approval:d-2');
      expect(await replicas[3]!.claim('approval:d-2', until)).toBe(true);
      expect(await replicas[0]!.claim('approval:d-2', until)).toBe(false);
      // A claim ends at its `until`, by Redis's clock: polled until it has.
      expect(await replicas[0]!.claim('approval:d-3', new Date(Date.now() + 300))).toBe(true);
      await expect
        .poll(() => replicas[1]!.claim('approval:d-3', until), { timeout: 5_000, interval: 100 })
        .toBe(true);
      expect(await replicas[2]!.claim('approval:d-3', until)).toBe(false);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it('refuses to claim (UNAVAILABLE) while Redis cannot be reached', async () => {
    const uses = new RedisOneTimeUses({ url: 'redis://127.0.0.1:1', timeoutMs: 300 });
    try {
      await expect(uses.claim('approval:d-4', new Date(Date.now() + 60_000))).rejects.toMatchObject(
        UNAVAILABLE,
      );
    } finally {
      await uses.close();
    }
  });
});

/**
 * The store of uses down while the audit log (a file here) still works: nothing is used,
 * and the approval is still there once the store is back.
 */
describe('an approval while the store of uses is down', () => {
  const world = buildIndex([
    capability('files.write'),
    capability('mcp.notes.delete_note'),
    grant('agent-1', 'agent-1', [{ capability: 'files.write' }, { capability: 'mcp.notes.delete_note' }]),
    policy('gate', [
      { capability: 'files.write', outcome: 'REQUIRE_CONFIRMATION' },
      { capability: 'mcp.notes.delete_note', outcome: 'ESCALATE' },
    ]),
  ]);
  const clock = () => new Date();
  let uses: RedisOneTimeUses;
  let governed: ServiceOnTempLog;
  let inPath: InPathDecisions;

  beforeAll(async () => {
    uses = new RedisOneTimeUses({ url: redis.url, timeoutMs: 500, keyPrefix: 'down-test:' });
    governed = await serviceOnTempLog(() => world, clock, { uses });
    inPath = new InPathDecisions({
      index: { current: () => world },
      audit: governed.log,
      limiter: new MemoryRateLimiter(),
      settings: resolveEngineSettings(),
      clock,
      recorder: governed.service.recorder,
      uses,
    });
  });
  afterAll(async () => {
    await uses.close();
    await governed.close();
  });

  const reviewsOf = async (id: string) => (await governed.service.get(id)).reviews.map((r) => r.data.action);
  const toolCall: InPathRequest = {
    proposal: proposal('mcp.notes.delete_note', { title: 'old' }, { type: 'ai-agent' }),
    principal: 'agent-1',
    recorded: { mcp: { fingerprint: 'f-1', server: 'notes', session_id: 's-1', tool: 'delete_note' } },
    dryRun: false,
  };

  it('refuses a confirmation token and an approved retry, and lets each through once Redis is back', async () => {
    const { service } = governed;
    const write = (context?: { confirmation_token: string }) =>
      proposal('files.write', { path: '/a' }, {}, context);
    const confirmable = await service.propose(write(), 'agent-1');
    const { confirmation_token } = await service.review(confirmable.decision_id, 'approve', 'reviewer');
    const escalated = await inPath.decide(toolCall);
    expect(escalated.outcome).toBe('ESCALATE');
    await service.review(escalated.decisionId!, 'approve', 'reviewer');

    await redis.kill9();
    try {
      await expect(
        service.propose(write({ confirmation_token: confirmation_token! }), 'agent-1'),
      ).rejects.toMatchObject(UNAVAILABLE);
      await expect(inPath.decide(toolCall)).rejects.toMatchObject(UNAVAILABLE);
      expect(await reviewsOf(confirmable.decision_id)).toEqual(['approve']);
      expect(await reviewsOf(escalated.decisionId!)).toEqual(['approve']);
    } finally {
      await redis.restart();
    }

    const confirmed = await vi.waitFor(
      () => service.propose(write({ confirmation_token: confirmation_token! }), 'agent-1'),
      {
        timeout: 10_000,
        interval: 200,
      },
    );
    expect(confirmed.outcome).toBe('ALLOW');
    expect((await inPath.decide(toolCall)).outcome).toBe('ALLOW');
    expect(await reviewsOf(confirmable.decision_id)).toEqual(['approve', 'confirmation_used']);
    expect(await reviewsOf(escalated.decisionId!)).toEqual(['approve', 'confirmation_used']);
  });
});
