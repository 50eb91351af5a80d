import { afterEach, describe, expect, it } from 'vitest';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import { ParameterMasker } from '../governance/parameter-masker.js';
import { serviceOnTempLog, type ServiceOnTempLog } from '../governance/test-decision-service.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import { DecisionReplay, maskedPaths } from './replay.js';

const vault = (tokenSchema: Record<string, unknown>, condition?: string) =>
  buildIndex([
    capability('vault.read', {
      parameterSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, token: { ...tokenSchema, 'x-arbiter-sensitive': true } },
      },
    }),
    grant('agent-1', 'agent-1', [{ capability: 'vault.read' }]),
    policy('prod', [
      { capability: 'vault.read', condition: condition ?? "parameters.path == 'prod'", outcome: 'DENY' },
    ]),
  ]);

let context: ServiceOnTempLog | undefined;
afterEach(() => context?.close());

/** The entries of decisions made on masked tokens, as an export holds them. */
async function recordedDecisions(snapshot: IndexSnapshot) {
  const index = { current: () => snapshot };
  context = await serviceOnTempLog(index.current, () => new Date('2026-11-24T12:00:00Z'), {
    masker: new ParameterMasker(Buffer.from('a-replay-test-mask-key'), index),
  });
  for (const path of ['prod', 'dev'])
    await context.service.propose(proposal('vault.read', { path, token: 'secret-1' }), 'key');
  return (await context.log.query({ order: 'asc', limit: 100 })).entries;
}

describe('replaying decisions with masked parameters', () => {
  it('finds the masked values', () => {
    expect(
      maskedPaths({ a: { masked: 'hmac-sha256:1' }, b: [{ c: { masked: 'x' } }], d: { masked: 1 } }),
    ).toEqual(['a', 'b[0].c']);
  });

  it('counts apart what a condition reading a masked field, or a schema refusing it, would decide', async () => {
    const entries = await recordedDecisions(vault({ type: 'string' }));
    const reads = new DecisionReplay(vault({}, "parameters.token == 'x'"), 'ALLOW');
    const refuses = new DecisionReplay(vault({ type: 'string' }), 'ALLOW');
    const neither = new DecisionReplay(vault({}), 'ALLOW');
    for (const entry of entries) for (const replay of [reads, refuses, neither]) replay.add(entry);
    expect(reads.report()).toMatchObject({ replayed: 0, apart: { masked: 2 } });
    expect(refuses.report()).toMatchObject({ replayed: 0, apart: { masked: 2 } });
    // Nothing depends on the token's value: replayed, and the same outcomes.
    expect(neither.report()).toMatchObject({ replayed: 2, unchanged: 2, apart: { masked: 0 } });
  });
});
