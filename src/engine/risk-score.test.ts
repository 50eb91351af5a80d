import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildIndex } from '../index/index.js';
import { ACTOR_TYPES, RISK_LEVELS, type ActorType, type RiskLevel } from '../model/index.js';
import { DEFAULT_ENGINE_SETTINGS, resolveEngineSettings } from './engine-settings.js';
import { riskScore } from './risk-score.js';
import { capability, proposal } from './test-fixtures.js';

const weights = DEFAULT_ENGINE_SETTINGS.riskWeights;
const capOf = (riskLevel: RiskLevel) => buildIndex([capability('a.b', { riskLevel })]).capability('a.b');

describe('riskScore', () => {
  it.each([
    ['low', 'automation', undefined, 0.1],
    ['low', 'human', undefined, 0.05],
    ['medium', 'ai-copilot', undefined, 0.35],
    ['high', 'ai-agent', undefined, 0.7],
    ['high', 'ai-agent', 'production', 0.8],
    ['critical', 'ai-agent', 'production', 1],
    ['critical', 'human', 'staging', 0.8],
    ['low', 'ai-copilot', 'production', 0.25],
  ] as Array<[RiskLevel, ActorType, string | undefined, number]>)(
    '%s, %s, %s -> %s',
    (level, type, env, expected) => {
      const p = proposal('a.b', {}, { type }, env ? { metadata: { environment: env } } : undefined);
      expect(riskScore(capOf(level), p, weights)).toBe(expected);
    },
  );

  it('uses the critical base for an unknown capability', () => {
    expect(riskScore(undefined, proposal('a.b', {}, { type: 'automation' }), weights)).toBe(0.85);
  });

  it('uses configured weights and clamps to [0, 1]', () => {
    const custom = resolveEngineSettings({
      riskWeights: { riskLevel: { low: -2 }, productionEnvironment: 5 },
    });
    expect(custom.riskWeights.riskLevel.high).toBe(0.6); // others keep their default
    expect(riskScore(capOf('low'), proposal('a.b'), custom.riskWeights)).toBe(0);
    const prod = proposal('a.b', {}, {}, { metadata: { environment: 'production' } });
    expect(riskScore(capOf('high'), prod, custom.riskWeights)).toBe(1);
  });

  it('is always in [0, 1] with at most 4 decimals (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RISK_LEVELS),
        fc.constantFrom(...ACTOR_TYPES),
        fc.boolean(),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (level, type, production, weight) => {
          const w = resolveEngineSettings({ riskWeights: { actorType: { [type]: weight } } }).riskWeights;
          const p = proposal(
            'a.b',
            {},
            { type },
            production ? { metadata: { environment: 'production' } } : undefined,
          );
          const score = riskScore(capOf(level), p, w);
          return score >= 0 && score <= 1 && Math.round(score * 10_000) / 10_000 === score;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects settings that are not finite numbers', () => {
    expect(() => resolveEngineSettings({ riskThreshold: Number.NaN })).toThrow(/finite/);
  });
});
